"""The same breakpoints hit under debugpy (the debugger behind VS Code), driven here
through its Debug Adapter Protocol: set a breakpoint on a line of a dumped file,
wait for the stop, evaluate a live tensor in that frame."""
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("debugpy")

import test_debugger as pdb_test  # noqa: E402  (same script and dump)

pytestmark = pytest.mark.torch


class DapClient:
    """Just enough of the Debug Adapter Protocol to stop at a breakpoint and look around."""

    def __init__(self, port, deadline):
        self.deadline = deadline
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        self.buffer, self.seq, self.messages = b"", 0, []

    def send(self, command, **arguments):
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def _read_one(self):
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        header, rest = self.buffer.split(b"\r\n\r\n", 1)
        length = int([h for h in header.split(b"\r\n") if h.startswith(b"Content-Length")][0].split(b":")[1])
        while len(rest) < length:
            self.buffer = header + b"\r\n\r\n" + rest
            self._fill()
            header, rest = self.buffer.split(b"\r\n\r\n", 1)
        self.buffer = rest[length:]
        return json.loads(rest[:length])

    def _fill(self):
        if time.time() > self.deadline:
            raise TimeoutError("no answer from debugpy")
        self.sock.settimeout(max(1.0, self.deadline - time.time()))
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("debugpy closed the connection")
        self.buffer += chunk

    def wait(self, predicate):
        for i, message in enumerate(self.messages):
            if predicate(message):
                return self.messages.pop(i)
        while True:
            message = self._read_one()
            if predicate(message):
                return message
            self.messages.append(message)

    def request(self, command, **arguments):
        seq = self.send(command, **arguments)
        response = self.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)
        assert response["success"], response
        return response.get("body", {})

    def event(self, name):
        return self.wait(lambda m: m.get("type") == "event" and m.get("event") == name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Only against a hang: the script compiles under torch and runs traced by debugpy, which
# took over 300 s on this 2-core machine with three other torch jobs running.
HANG_GUARD = 1200


def stop_under_debugpy(tmp_path, backend, filename, pattern, expression):
    """Dump, then run under debugpy with a breakpoint there; (frame, evaluated text)."""
    script = str(tmp_path / "toy.py")
    with open(script, "w") as f:
        f.write(pdb_test.SCRIPT)
    dump_dir = str(tmp_path / "dump")
    first = pdb_test.run(script, dump_dir, backend, "nopause")
    assert first.returncode == 0, first.stderr
    path = os.path.join(dump_dir, filename)
    line = pdb_test.line_of(path, pattern)

    port = free_port()
    env = dict(os.environ, PYTHONPATH=pdb_test.DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen", "127.0.0.1:%d" % port,
                             "--wait-for-client", script, dump_dir, backend, "pause"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            # (not the checkout: before 3.11 `python -m` puts the working directory
                            # first on sys.path, and the checkout's depyf has no build for it)
                            text=True, env=env, cwd=os.path.dirname(script),
                            start_new_session=True)  # (its adapter process too: see the finally block)
    try:
        client = DapClient(port, time.time() + HANG_GUARD)
        client.request("initialize", adapterID="python", clientID="depyf-test", linesStartAt1=True,
                       columnsStartAt1=True, pathFormat="path")
        client.send("attach", justMyCode=False)
        client.event("initialized")
        client.request("configurationDone")
        paused = client.event("stopped")  # depyf.debug() pauses: now set the breakpoint
        thread = paused["body"]["threadId"]
        verified = client.request("setBreakpoints", source={"path": path}, breakpoints=[{"line": line}])
        assert verified["breakpoints"][0]["verified"], verified
        client.request("continue", threadId=thread)
        stopped = client.event("stopped")
        assert stopped["body"]["reason"] == "breakpoint", stopped
        frames = client.request("stackTrace", threadId=thread, levels=1)
        frame = frames["stackFrames"][0]
        value = client.request("evaluate", expression=expression, frameId=frame["id"], context="repl")
        client.request("setBreakpoints", source={"path": path}, breakpoints=[])
        client.request("continue", threadId=thread)
        client.event("terminated")
        client.sock.close()  # lets debugpy's adapter process (which shares our pipes) exit
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        # on failure debugpy's adapter outlives the script and holds our pipes: waiting for
        # them would block forever, so the whole session goes
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.returncode is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-3000:]
    assert "RESULT" in out
    return frame, line, path, value["result"]


def test_debugpy_stops_in_the_captured_graph_with_live_tensors(tmp_path):
    frame, line, path, value = stop_under_debugpy(
        tmp_path, "eager", "__compiled_fn_1.Captured_Graph.0.py", r"= torch\.abs\(l_a_\)", "l_a_")
    assert os.path.samefile(frame["source"]["path"], path) and frame["line"] == line
    assert value.startswith("tensor([2., 2., 2.")


def test_debugpy_stops_in_the_transformed_code(tmp_path):
    """Needs the decompiler."""
    frame, line, path, value = stop_under_debugpy(
        tmp_path, "eager", "__transformed_code_0_for_toy_example.py", r"__compiled_fn_1(?:_\w+)?\(", "a")
    assert os.path.samefile(frame["source"]["path"], path) and frame["line"] == line
    assert value.startswith("tensor([2., 2., 2.")
