#!/usr/bin/env python3
"""Fails if any source file of a crate reaches, through its `crate::`, `super::` or child-module
paths, a file that reaches it back (directly or around a longer circle): each file may depend
only on the layers below it. `mod` declarations are not dependencies.
Usage: check_layers.py CRATE_SRC_DIR..."""
import os
import re
import sys


def module_files(src):
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                parts = os.path.relpath(path, src)[:-3].split(os.sep)
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                files[tuple(parts)] = path
    return files


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", text)


def paths_in(text):
    """Every `a::b::c` path, with `{...}` groups after a `::` expanded one level deep."""
    out = []
    for m in re.finditer(r"\b((?:\w+::)+)\{([^{}]*)\}", text):
        for item in m.group(2).split(","):
            item = item.strip()
            if item:
                out.append(m.group(1) + item)
    out += re.findall(r"\b\w+(?:::\w+)+", text)
    return out


def resolve(module, path, files, children):
    """The module file a path starting in `module` lands in, if any."""
    segs = path.split("::")
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] == "super":
        base = module[:-1]
        segs = segs[1:]
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
    elif segs[0] == "self":
        base, segs = module, segs[1:]
    elif segs[0] in children:
        base = module
    else:
        return None
    target = base
    for s in segs:
        if target + (s,) in files:
            target = target + (s,)
        else:
            break
    return target


def check(src):
    files = module_files(src)
    deps = {}
    for module, path in files.items():
        text = strip_comments(open(path, encoding="utf-8").read())
        children = set(re.findall(r"\bmod\s+(\w+)\s*;", text))
        targets = {resolve(module, p, files, children) for p in paths_in(text)}
        deps[module] = {t for t in targets if t is not None and t != module and t in files}
    # A module's file may name its own descendants (mod.rs over its children), not its ancestors.
    bad = []
    state = {}

    def visit(m, stack):
        state[m] = 1
        for d in sorted(deps[m]):
            if state.get(d) == 1:
                bad.append(stack[stack.index(d):] + [d] if d in stack else [m, d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(files):
        if m not in state:
            visit(m, [m])
    name = lambda m: os.path.relpath(files[m], os.path.dirname(src)) if m in files else str(m)
    for cycle in bad:
        print("layers: import circle in %s: %s" % (src, " -> ".join(name(m) for m in cycle)))
    return not bad


if __name__ == "__main__":
    ok = all([check(d.rstrip("/")) for d in sys.argv[1:]])
    sys.exit(0 if ok else 1)
