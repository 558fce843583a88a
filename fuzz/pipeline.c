/* Harness (b): code model -> source for bytecode no compiler made.
 *
 * The generator turns fuzz bytes into a well-formed code model: real opcodes
 * of the chosen version with their inline CACHE units, EXTENDED_ARG where an
 * argument needs it, jumps to any instruction (backward or forward, into the
 * middle of a "block"), arguments mostly inside the consts/names/varnames
 * tables, 3.11+ exception tables whose ranges and handlers sit on
 * instruction starts, nested code objects in the constants.  Nothing makes
 * the stack balance: unbalanced stacks and values left over before jumps
 * (what Dynamo emits) come out naturally.  Raw, damaged code objects come
 * from the marshal mode, whose seeds are real compiler output. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#include "depyf.h"
#include "opcodes.h"

#define GEN_MAX_DEPTH 3      /* nested code objects per input */
#define GEN_MAX_INSTRS 400   /* per code object: small keeps executions fast */

typedef struct bytes_in {
    const uint8_t *p;
    size_t n, i;
} bytes_in;

/* Past the end every read is 0: short inputs still make a model. */
static unsigned take(bytes_in *s) { return s->i < s->n ? s->p[s->i++] : 0; }
static unsigned take16(bytes_in *s) { return take(s) | take(s) << 8; }

static dp_strs gen_strs(dp_arena *a, const char *prefix, size_t n) {
    dp_strs s = {dp_alloc_array(a, n ? n : 1, sizeof(char *)), 0};
    if (s.v == NULL)
        return s;
    for (size_t k = 0; k < n; k++) {
        char name[16];
        name[0] = prefix[0];
        name[1] = (char)('0' + k % 10);
        name[2] = '\0';
        if ((s.v[k] = dp_strdup(a, name)) == NULL)
            return s;
        s.n++;
    }
    return s;
}

static dp_code *gen_code(dp_arena *a, bytes_in *s, int minor, int depth);

static dp_const *gen_const(dp_arena *a, bytes_in *s, int minor, int depth) {
    static const char *const texts[] = {"0", "-1", "12345678901234567890", "a", "", "x\ny"};
    unsigned pick = take(s);
    dp_const_kind kinds[] = {DP_CONST_NONE, DP_CONST_TRUE, DP_CONST_FALSE, DP_CONST_ELLIPSIS,
                             DP_CONST_INT,  DP_CONST_FLOAT, DP_CONST_COMPLEX, DP_CONST_STR,
                             DP_CONST_BYTES, DP_CONST_TUPLE, DP_CONST_FROZENSET, DP_CONST_CODE,
                             DP_CONST_OTHER};
    dp_const_kind kind = kinds[pick % (sizeof kinds / sizeof *kinds)];
    if (kind == DP_CONST_CODE && depth >= GEN_MAX_DEPTH)
        kind = DP_CONST_NONE;
    dp_const *c = dp_const_new(a, kind);
    if (c == NULL)
        return NULL;
    const char *t = texts[(pick >> 4) % (sizeof texts / sizeof *texts)];
    switch (kind) {
    case DP_CONST_INT:
        t = (pick >> 4) % 2 ? "-7" : "42";
        /* fall through */
    case DP_CONST_STR:
    case DP_CONST_BYTES:
    case DP_CONST_OTHER:
        c->text = t;
        c->len = strlen(t);
        break;
    case DP_CONST_FLOAT:
    case DP_CONST_COMPLEX:
        c->f = (double)(int)take(s) - 100.5;
        c->im = pick & 0x80 ? -0.0 : 2.0;
        break;
    case DP_CONST_TUPLE:
    case DP_CONST_FROZENSET:
        c->n = take(s) % 3;
        c->items = dp_alloc_array(a, c->n + 1, sizeof *c->items);
        if (c->items == NULL)
            return NULL;
        for (size_t k = 0; k < c->n; k++)
            if ((c->items[k] = dp_const_new(a, DP_CONST_INT)) != NULL) {
                c->items[k]->text = texts[k % 2];
                c->items[k]->len = strlen(texts[k % 2]);
            } else {
                return NULL;
            }
        break;
    case DP_CONST_CODE:
        if ((c->code = gen_code(a, s, minor, depth + 1)) == NULL)
            return NULL;
        break;
    default:
        break;
    }
    return c;
}

/* Exception table varints (CPython's Objects/exception_handling_notes.txt):
 * 6-bit groups, most significant first, 0x40 = more follow, 0x80 marks the
 * first varint of an entry. */
static size_t put_varint(uint8_t *p, uint32_t v, uint8_t first) {
    size_t n = 0;
    for (int shift = 24; shift > 0; shift -= 6)
        if (v >= (uint32_t)1 << shift) {
            p[n++] = (uint8_t)(((v >> shift) & 63) | 64 | first);
            first = 0;
        }
    p[n++] = (uint8_t)((v & 63) | first);
    return n;
}

/* The table an argument most likely indexes, from the opcode's name. */
static size_t arg_range(const char *name, const dp_code *co) {
    if (strstr(name, "CONST"))
        return co->nconsts;
    if (strstr(name, "FAST"))
        return co->varnames.n;
    if (strstr(name, "DEREF") || strstr(name, "CLOSURE"))
        return co->varnames.n + co->cellvars.n + co->freevars.n;
    /* 3.11+ LOAD_GLOBAL and 3.12+ LOAD_ATTR keep a flag in bit 0 */
    if (strstr(name, "GLOBAL"))
        return co->names.n * (co->py_minor >= 11 ? 2 : 1);
    if (strstr(name, "ATTR"))
        return co->names.n * (co->py_minor >= 12 ? 2 : 1);
    if (strstr(name, "NAME") || strstr(name, "METHOD"))
        return co->names.n;
    return 0;
}

typedef struct gen_instr {
    uint8_t op, ext;     /* ext: an EXTENDED_ARG comes first */
    uint32_t arg, target; /* target: instruction index, for jumps */
    uint32_t start, units;
} gen_instr;

/* What compilers emit most: drawn half of the time, so that more of the
 * generated code gets past the first stack check into the structurer. */
static const enum dp_opname common_ops[] = {
    DPO_LOAD_FAST, DPO_LOAD_CONST, DPO_STORE_FAST, DPO_POP_TOP, DPO_LOAD_GLOBAL, DPO_LOAD_NAME,
    DPO_STORE_NAME, DPO_POP_JUMP_IF_FALSE, DPO_POP_JUMP_IF_TRUE, DPO_JUMP_FORWARD, DPO_JUMP_BACKWARD,
    DPO_JUMP_ABSOLUTE, DPO_RETURN_VALUE, DPO_RETURN_CONST, DPO_BINARY_OP, DPO_BINARY_ADD, DPO_COMPARE_OP,
    DPO_CALL, DPO_CALL_FUNCTION, DPO_PRECALL, DPO_PUSH_NULL, DPO_COPY, DPO_SWAP, DPO_DUP_TOP, DPO_ROT_TWO,
    DPO_GET_ITER, DPO_FOR_ITER, DPO_END_FOR, DPO_NOP, DPO_BUILD_TUPLE, DPO_UNPACK_SEQUENCE,
};

static int gen_bytecode(dp_arena *a, bytes_in *s, dp_code *co) {
    const dp_optable *t = dp_optable_for(co->py_minor);
    uint8_t valid[256], common[sizeof common_ops / sizeof *common_ops], extended_arg = 0;
    unsigned nvalid = 0, ncommon = 0;
    for (unsigned b = 0; b < 256; b++) {
        /* CACHE only follows others; INSTRUMENTED_* exist only at run time */
        if (t->op[b] != DPO_UNKNOWN && t->op[b] != DPO_CACHE && strncmp(dp_opname_str[t->op[b]], "INSTRUMENTED_", 13) != 0)
            valid[nvalid++] = (uint8_t)b;
        if (t->op[b] == DPO_EXTENDED_ARG)
            extended_arg = (uint8_t)b;
        for (size_t k = 0; k < sizeof common_ops / sizeof *common_ops; k++)
            if (t->op[b] == common_ops[k] && t->op[b] != DPO_UNKNOWN)
                common[ncommon++] = (uint8_t)b;
    }
    /* mostly short: each random instruction is another chance to fail early */
    unsigned size = take16(s);
    size_t n = 1 + (size & 1 ? (size >> 1) % GEN_MAX_INSTRS : (size >> 1) % 12);
    /* then `return consts[0]`, so that code which falls off the random part
     * still ends as a function does */
    size_t total = n + 2;
    gen_instr *in = dp_alloc_array(a, total, sizeof *in);
    if (in == NULL || nvalid == 0)
        return -1;
    for (unsigned b = 0; b < 256; b++) {
        if (t->op[b] == DPO_LOAD_CONST)
            in[n].op = (uint8_t)b;
        if (t->op[b] == DPO_RETURN_VALUE)
            in[n + 1].op = (uint8_t)b;
    }
    uint32_t units = 0;
    for (size_t k = 0; k < total; k++) {
        gen_instr *g = &in[k];
        if (k >= n) { /* the return */
            g->start = units;
            g->units = 1u + t->caches[g->op];
            units += g->units;
            continue;
        }
        unsigned pick = take(s);
        g->op = (pick & 1) && ncommon ? common[(pick >> 1) % ncommon] : valid[pick % nvalid];
        uint8_t f = t->flags[g->op];
        unsigned raw = take(s);
        if (f & (DP_OPF_JREL | DP_OPF_JABS)) {
            g->ext = 1; /* a fixed size keeps the layout independent of targets */
            g->target = take16(s) % (n + 1);
        } else if (f & DP_OPF_HASARG) {
            const char *name = dp_opname_str[t->op[g->op]];
            size_t range = arg_range(name, co);
            g->arg = (raw & 0xf0) == 0xf0 || range == 0 ? raw : raw % range; /* mostly in range */
            if (strcmp(name, "COMPARE_OP") == 0 && (raw & 0xf0) != 0xf0) /* 3.12+ shift the comparison */
                g->arg = (raw % 6) << (co->py_minor == 12 ? 4 : co->py_minor >= 13 ? 5 : 0);
            else if (strcmp(name, "BINARY_OP") == 0 && (raw & 0xf0) != 0xf0)
                g->arg = raw % 26;
            if (raw == 0xff) { /* a large argument, just past one byte */
                g->ext = 1;
                g->arg = 0x100 | take(s);
            }
        }
        g->start = units;
        g->units = 1u + g->ext + t->caches[g->op];
        units += g->units;
    }
    uint32_t scale = co->py_minor >= 10 ? 1 : 2; /* 3.8/3.9 jump in bytes */
    uint8_t *code = dp_alloc(a, (size_t)units * 2);
    if (code == NULL)
        return -1;
    for (size_t k = 0; k < total; k++) {
        gen_instr *g = &in[k];
        uint8_t f = t->flags[g->op];
        if (f & DP_OPF_JABS) {
            g->arg = in[g->target].start * scale;
        } else if (f & DP_OPF_JREL) {
            int64_t delta = (int64_t)in[g->target].start - (g->start + g->units);
            if (strstr(dp_opname_str[t->op[g->op]], "BACKWARD"))
                delta = -delta;
            g->arg = (uint32_t)(delta * scale) & 0xffff; /* the wrong way round: anywhere */
        }
        uint8_t *p = code + (size_t)g->start * 2;
        if (g->ext) {
            *p++ = extended_arg;
            *p++ = (uint8_t)(g->arg >> 8);
        }
        *p++ = g->op;
        *p++ = (uint8_t)g->arg;
        /* CACHE units stay zero: opcode 0 is CACHE in 3.11+ */
    }
    co->code = code;
    co->codelen = (size_t)units * 2;
    co->stacksize = (int)take(s);
    if (co->py_minor < 11)
        return 0;
    size_t nexc = take(s) % 5;
    uint8_t *tab = dp_alloc(a, nexc * 4 * 5 + 1);
    if (tab == NULL)
        return -1;
    size_t len = 0;
    for (size_t e = 0; e < nexc; e++) {
        size_t from = take16(s) % n, to = from + 1 + take16(s) % (n - from);
        uint32_t end = to < n ? in[to].start : units;
        unsigned dl = take(s);
        len += put_varint(tab + len, in[from].start, 0x80);
        len += put_varint(tab + len, end - in[from].start, 0);
        len += put_varint(tab + len, in[take16(s) % n].start, 0);
        len += put_varint(tab + len, dl % 8, 0); /* depth << 1 | lasti */
    }
    co->exctable = tab;
    co->exctablelen = len;
    return 0;
}

static dp_code *gen_code(dp_arena *a, bytes_in *s, int minor, int depth) {
    static const char *const names[] = {"f", "f", "f", "<module>", "<lambda>", "<listcomp>", "<genexpr>", "C"};
    dp_code *co = dp_code_new(a);
    if (co == NULL)
        return NULL;
    co->py_minor = minor;
    unsigned shape = take(s);
    co->name = co->qualname = names[shape % (sizeof names / sizeof *names)];
    co->filename = "<fuzz>";
    static const int kinds[] = {DP_CO_GENERATOR, DP_CO_COROUTINE, DP_CO_ASYNC_GENERATOR, 0, 0, 0, 0, 0};
    unsigned flags = take(s);
    co->flags = DP_CO_OPTIMIZED | DP_CO_NEWLOCALS | kinds[flags % 8] |
                (int)(flags & (DP_CO_VARARGS | DP_CO_VARKEYWORDS | DP_CO_NESTED));
    co->names = gen_strs(a, "n", 1 + take(s) % 8);
    co->varnames = gen_strs(a, "v", 1 + take(s) % 8);
    co->cellvars = gen_strs(a, "c", take(s) % 3);
    co->freevars = gen_strs(a, "f", take(s) % 3);
    if (co->names.v == NULL || co->varnames.v == NULL || co->cellvars.v == NULL || co->freevars.v == NULL)
        return NULL;
    int nv = (int)co->varnames.n;
    co->argcount = (int)take(s) % (nv + 1);
    co->posonlyargcount = (int)take(s) % (co->argcount + 1);
    co->kwonlyargcount = (int)take(s) % (nv - co->argcount + 1);
    int room = nv - co->argcount - co->kwonlyargcount; /* *args and **kw need their own names */
    if (room < 2)
        co->flags &= ~DP_CO_VARKEYWORDS;
    if (room < 1)
        co->flags &= ~DP_CO_VARARGS;
    co->firstlineno = (int)take(s);
    co->nconsts = 1 + take(s) % 8;
    co->consts = dp_alloc_array(a, co->nconsts + 1, sizeof *co->consts);
    if (co->consts == NULL)
        return NULL;
    for (size_t k = 0; k < co->nconsts; k++)
        if ((co->consts[k] = gen_const(a, s, minor, depth)) == NULL)
            return NULL;
    if (gen_bytecode(a, s, co) < 0)
        return NULL;
    size_t nlines = take(s) % 16; /* any line table: the lifter must survive it */
    uint8_t *lines = dp_alloc(a, nlines + 1);
    if (lines == NULL)
        return NULL;
    for (size_t k = 0; k < nlines; k++)
        lines[k] = (uint8_t)take(s);
    co->linetable = nlines ? lines : NULL;
    co->linetablelen = nlines;
    return co;
}

static void check_pipeline_result(int rc, const dp_error *err, const dp_buf *out) {
    if (rc < 0 && (!err->set || err->msg[0] == '\0'))
        __builtin_trap();
    /* nothing appended (an empty module) leaves data NULL; source is UTF-8
     * text (a name made of bytes would not be) */
    if (rc == 0 && dp_buf_ok(out) && out->len > 0 &&
        (out->data == NULL || strlen(out->data) != out->len || dp_utf8_invalid_at(out->data, out->len) != out->len))
        __builtin_trap();
}

/* Decompiles and lists `code`, made from `len` bytes of input; returns the
 * size of the model (dp_input_size). */
static size_t run_pipeline(const dp_code *code, unsigned knobs, size_t len) {
    dp_linemap map = {0};
    dp_usage use = {0};
    dp_options opt = {0};
    opt.indent = (int)(knobs % 9);
    if (knobs & 0x10)
        opt.linemap = &map;
    opt.usage = &use;
    dp_buf out;
    dp_buf_init(&out);
    dp_error err;
    dp_error_init(&err);
    check_pipeline_result(dp_decompile(code, &opt, &out, &err), &err, &out);
    /* the model in proportion to the input (a generated one has a floor:
     * past the input every byte the generator takes is 0), the work and
     * the source within the budgets of the core, and the memory in
     * proportion to the work */
    fuzz_check_proportional(use.input.bytes, 1 << 20, 64, len);
    fuzz_check_proportional(use.work, DP_WORK_FLOOR, DP_WORK_FACTOR, use.input.bytecode);
    fuzz_check_proportional(out.len, DP_OUTPUT_FLOOR, DP_OUTPUT_FACTOR, use.input.bytes);
    fuzz_check_proportional(use.memory, FUZZ_MEMORY_FLOOR, FUZZ_MEMORY_PER_BYTE, use.work + use.input.bytes);
    free(map.entries);
    dp_buf_free(&out);
    dp_buf_init(&out);
    dp_error_init(&err);
    check_pipeline_result(dp_disasm(code, &out, &err), &err, &out);
    fuzz_check_proportional(out.len, 64 << 10, FUZZ_LISTING_PER_BYTE, use.input.bytes);
    dp_buf_free(&out);
    return use.input.bytes;
}

int fuzz_pipeline_one(const uint8_t *data, size_t len) {
    if (len < 2)
        return 0;
    fuzz_clock clock = fuzz_clock_start();
    int minor = DP_MIN_MINOR + data[1] % (DP_MAX_MINOR - DP_MIN_MINOR + 1);
    dp_arena a;
    dp_arena_init(&a);
    dp_code *code = NULL;
    if (data[0] % 2 == 0) {
        bytes_in s = {data + 2, len - 2, 0};
        code = gen_code(&a, &s, minor, 0);
    } else {
        dp_error err;
        dp_error_init(&err);
        dp_const *c = NULL;
        if (dp_marshal_load(&a, data + 2, len - 2, minor, &c, &err) == 0 && c->kind == DP_CONST_CODE)
            code = c->code;
    }
    size_t size = code != NULL ? run_pipeline(code, data[0] >> 1, len) : 0;
    dp_arena_free(&a);
    /* (the generator can make a model larger than its input: by its size) */
    fuzz_clock_check(clock, size > len ? size : len);
    return 0;
}

#ifndef DP_FUZZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) { return fuzz_pipeline_one(data, len); }
#endif
