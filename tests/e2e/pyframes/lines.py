# lines.py — the line gpuphase reads for a Python frame at a wait must be the
# line CPython itself gives that frame (test_pyframes.sh). Every call site
# below waits through cs_wait_after(truth): the ctypes callback `truth` runs
# first, inside that call, and records "file:LINE (name)" of its caller's
# frame from f_lineno (CPython's own decoding of the same instruction); the
# wait follows with the caller's frame unchanged. The sites cover what a line
# table encodes differently: multi-line expressions, exception handlers,
# closures, comprehensions, generators, a lambda, a method, and a function so
# long that its table needs extended entries (byte and line steps beyond one
# byte). Prints the recorded names, sorted, one a line.
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.cs_setup()
seen = set()


@ctypes.CFUNCTYPE(None)
def truth():
    f = sys._getframe(1)
    c = f.f_code
    seen.add("%s:%d (%s)" % (c.co_filename, f.f_lineno, getattr(c, "co_qualname", c.co_name)))


def plain():
    lib.cs_wait_after(truth)


def multiline():
    x = (1 +
         lib.cs_wait_after(
             truth))
    return x


def handlers():
    try:
        raise ValueError
    except ValueError:
        lib.cs_wait_after(truth)
    finally:
        lib.cs_wait_after(truth)


def closure():
    def inner():
        return lib.cs_wait_after(truth)
    return inner()


def comprehension():
    return [lib.cs_wait_after(truth) for _ in range(1)]


def generator():
    yield lib.cs_wait_after(truth)
    yield lib.cs_wait_after(truth)


class Model:
    def method(self):
        lib.cs_wait_after(truth)


lam = lambda: lib.cs_wait_after(truth)  # noqa: E731

# 300 statements, then 200 empty lines: more than 256 bytes of code and a
# line step of more than 127 before the wait
src = "def long_function(lib, truth):\n" + "    a = 1\n" * 300 + "\n" * 200 + \
      "    lib.cs_wait_after(truth)\n" + "    a = 2\n" * 50 + "    lib.cs_wait_after(truth)\n"
ns = {}
exec(compile(src, "lines_long.py", "exec"), ns)
long_function = ns["long_function"]

m = Model()
for _ in range(100):
    plain()
    multiline()
    handlers()
    closure()
    comprehension()
    list(generator())
    m.method()
    lam()
    long_function(lib, truth)
    lib.cs_wait_after(truth)
print("\n".join(sorted(seen)))
