#!/usr/bin/env python3
"""Compares a model output with a reference (raw little-endian f32 files, e.g. tessel's
`tunecli run --output` against ../shared/models*/MODEL.ort.f32): max abs error, the same
divided by max |reference|, same top-5 (flat indices), and with --classes C the fraction
of pixels whose argmax over the C channels of a [1, C, H, W] output agrees.

  scripts/compare_f32.py GOT.f32 REF.f32 [--classes C]
Exit status 0; it measures, it does not judge. Python's standard library only."""
import array
import sys


def read(path):
    a = array.array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    return a


def main():
    args = sys.argv[1:]
    classes = 0
    if "--classes" in args:
        i = args.index("--classes")
        classes = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    got, ref = read(args[0]), read(args[1])
    if len(got) != len(ref):
        sys.exit(f"compare_f32: {len(got)} values in {args[0]}, {len(ref)} in {args[1]}")
    err = max(abs(a - b) for a, b in zip(got, ref))
    scale = max(abs(b) for b in ref)
    top = lambda v: sorted(range(len(v)), key=lambda i: -v[i])[:5]
    print(f"values {len(ref)}  max abs err {err:.3e}  max |ref| {scale:.4g}  err/max {err / scale:.3e}  "
          f"top-5 same {top(got) == top(ref)}")
    if classes:
        hw = len(ref) // classes
        agree = 0
        for p in range(hw):
            am = max(range(classes), key=lambda c: got[c * hw + p])
            bm = max(range(classes), key=lambda c: ref[c * hw + p])
            agree += am == bm
        print(f"pixels {hw}  argmax agreement {agree / hw:.6f}")


main()
