"""Real workloads for the torch tests and the benchmark: small, CPU, no downloads.

Each workload is `run(compile_fn) -> list of tensors`: it builds its model with a
fixed seed, compiles what should be compiled with `compile_fn` (identity for
eager), runs it, and returns everything worth comparing (outputs, gradients,
updated parameters).
"""

import math

import torch
import torch.nn as nn


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def run_toy(compile_fn):
    torch.manual_seed(0)
    fn = compile_fn(toy_example)
    outs = []
    for _ in range(6):
        outs.append(fn(torch.randn(10), torch.randn(10)))
    return outs


def run_toy_grad(compile_fn):
    """The seed's second example: inputs that require grad, then a new size."""
    torch.manual_seed(0)
    fn = compile_fn(toy_example)
    outs = []
    for n in (10, 10, 8):
        a, b = torch.randn(n, requires_grad=True), torch.randn(n, requires_grad=True)
        out = fn(a, b)
        out.sum().backward()
        outs += [out.detach(), a.grad, b.grad]
    return outs


def run_mlp_training(compile_fn, steps=3):
    """A training step with backward and an SGD update, the model compiled."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    compiled = compile_fn(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data, target = torch.randn(8, 16), torch.randint(0, 4, (8,))
    return classifier_steps(model, compiled, opt, data, target, steps)


def run_transformer_dynamic(compile_fn):
    """nn.TransformerEncoderLayer on batches whose size and sequence length vary."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    compiled = compile_fn(layer)
    outs = []
    for batch, seq in ((2, 5), (3, 7), (4, 9)):
        x = torch.randn(batch, seq, 16, requires_grad=True)
        out = compiled(x)
        out.sum().backward()
        outs += [out.detach(), x.grad]
    return outs


def graph_breaks(x):
    y = torch.sin(x) + 1
    print("depyf workload: a print breaks the graph")
    if y.sum().item() > x.numel():  # data-dependent branch on .item(): another break
        return y * 2
    return y - 1


# The lines of graph_breaks' two breaks (the print, the .item()): resume functions are named after them.
PRINT_LINE = graph_breaks.__code__.co_firstlineno + 2
ITEM_LINE = PRINT_LINE + 1


def run_graph_breaks(compile_fn):
    torch.manual_seed(0)
    fn = compile_fn(graph_breaks)
    return [fn(torch.randn(6) + shift) for shift in (3.0, -3.0, 3.0)]


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=2)
        shape = (batch, seq, self.heads, dim // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dim // self.heads)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        out = scores.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(batch, seq, dim))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """A GPT-style decoder: token + position embeddings, causal blocks, LM head."""

    def __init__(self, vocab=64, dim=32, heads=4, layers=3, max_seq=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        positions = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def run_gpt(compile_fn, steps=2, layers=3):
    """Training steps of TinyGPT: next-token loss, backward, AdamW update."""
    torch.manual_seed(0)
    model = TinyGPT(layers=layers)
    compiled = compile_fn(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    idx = torch.randint(0, 64, (2, 16))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        logits = compiled(idx[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 64), idx[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses + [p.detach().clone() for p in model.parameters()]


def closure_break(x, scale):
    """A nested function reading an outer local, called around a graph break."""
    offset = x.mean()

    def inner(t):
        return t * scale + offset

    y = inner(x)
    print("depyf workload: a print between two uses of the closure")
    return inner(y).relu()


def run_closure_break(compile_fn):
    torch.manual_seed(0)
    fn = compile_fn(closure_break)
    return [fn(torch.randn(5), s) for s in (2.0, 2.0, -1.0)]


def context_break(x):
    """A graph break inside a context manager (no_grad), values used after it."""
    h = x * 2
    with torch.no_grad():
        g = h.sin()
        print("depyf workload: a print inside no_grad")
        g = g + 1
    return (h * g).sum(), g


def run_context_break(compile_fn):
    torch.manual_seed(0)
    fn = compile_fn(context_break)
    x = torch.randn(4, requires_grad=True)
    loss, g = fn(x)
    loss.backward()
    return [loss.detach(), g, x.grad]


def loop_break(x, steps):
    """A loop Dynamo unrolls, then a graph break, then another loop."""
    total = torch.zeros_like(x)
    for i in range(steps):
        total = total + x * i
    print("depyf workload: a print after the loop")
    for i in range(steps):
        total = total - i
    return total


def run_loop_break(compile_fn):
    torch.manual_seed(0)
    fn = compile_fn(loop_break)
    return [fn(torch.randn(3) * 10, 4), fn(torch.randn(3), 3)]


class BreakingNet(nn.Module):
    """A module whose forward breaks the graph between two layers."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(6, 6), nn.Linear(6, 3)

    def forward(self, x):
        h = self.a(x).relu()
        torch._dynamo.graph_break()
        return self.b(h) + h[:, :3]


def run_module_break(compile_fn):
    torch.manual_seed(0)
    model = BreakingNet()
    compiled = compile_fn(model)
    outs = [compiled(torch.randn(2, 6)) for _ in range(2)]
    outs.append(compiled(torch.randn(5, 6)))  # a new batch size: a recompilation
    outs.append(compiled(torch.randn(2, 6).double().float()))
    return outs


def recompiled(x, mode):
    """Guards on a Python value and on dtypes: one cache entry per case."""
    if mode == "double":
        return x * 2
    return x + 1 if x.dtype == torch.float32 else x - 1


def run_recompiled(compile_fn):
    fn = compile_fn(recompiled)
    return [fn(torch.ones(3), "double"), fn(torch.ones(3), "plus"), fn(torch.ones(3, dtype=torch.float64), "plus")]


def classifier_steps(model, compiled, opt, data, target, steps):
    """`steps` cross-entropy training steps; the losses, then the parameters after them."""
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(compiled(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses + [p.detach().clone() for p in model.parameters()]


class BasicBlock(nn.Module):
    """ResNet's residual block: conv-bn-relu-conv-bn, plus the (projected) input."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.bn2(self.conv2(self.bn1(self.conv1(x)).relu()))
        return (out + (x if self.down is None else self.down(x))).relu()


class TinyResNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layers = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2))
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.layers(self.stem(x)).mean(dim=(2, 3)))


def run_resnet(compile_fn):
    """Two training steps of a ResNet-shaped model (batch norm in training mode)."""
    torch.manual_seed(0)
    model = TinyResNet()
    compiled = compile_fn(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data, target = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    return classifier_steps(model, compiled, opt, data, target, 2)


class TinyBert(nn.Module):
    """BERT-shaped: token + segment + position embeddings, a padding mask, encoder, pooler."""

    def __init__(self, vocab=50, dim=16, heads=2, layers=2, max_seq=16):
        super().__init__()
        self.tok, self.seg, self.pos = nn.Embedding(vocab, dim), nn.Embedding(2, dim), nn.Embedding(max_seq, dim)
        self.norm = nn.LayerNorm(dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pool = nn.Linear(dim, dim)

    def forward(self, ids, segments, mask):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.norm(self.tok(ids) + self.seg(segments) + self.pos(positions))
        x = self.encoder(x, src_key_padding_mask=~mask)
        return self.pool(x[:, 0]).tanh()


def run_bert(compile_fn):
    torch.manual_seed(0)
    model = TinyBert().eval()
    compiled = compile_fn(model)
    ids, segments = torch.randint(0, 50, (2, 10)), torch.randint(0, 2, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.bool)
    mask[1, 7:] = False
    with torch.no_grad():
        return [compiled(ids, segments, mask), compiled(ids, segments, mask)]


WORKLOADS = {
    "resnet": run_resnet,
    "bert": run_bert,
    "closure_break": run_closure_break,
    "context_break": run_context_break,
    "loop_break": run_loop_break,
    "module_break": run_module_break,
    "recompiled": run_recompiled,
    "toy": run_toy,
    "toy_grad": run_toy_grad,
    "mlp_training": run_mlp_training,
    "transformer_dynamic": run_transformer_dynamic,
    "graph_breaks": run_graph_breaks,
    "gpt": run_gpt,
}
