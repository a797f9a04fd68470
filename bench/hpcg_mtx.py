#!/usr/bin/env python3
"""bench/hpcg_mtx.py - the HPCG 27-point matrix of an NX x NY x NZ box as a Matrix Market file
(symmetric storage, lower triangle: 26 on the diagonal, -1 to each neighbour inside the box),
K copies of it down the diagonal with no coupling between them (a block-diagonal matrix).

  bench/hpcg_mtx.py NX NY NZ K PATH
  bench/hpcg_mtx.py --self-test

bench/run_dcg.sh writes the strong-scaling problem with K = 1 (the global G^3 box) and, for
the model's synchronized calibration of an oversubscribed row of P ranks, the P-block matrix of
the row's local box: cut into P contiguous row blocks (--partition block), every rank holds one
box and has no halo, while the CG's dot products still sum over all ranks, so that the ranks
meet at every allreduce as the row's ranks do (bench/cg_model.py, assumption 1b).
"""
import sys


def box_lower(nx, ny, nz):
    """(i, j, is_diagonal) of the box's lower triangle, rows in x-fastest order (as
    examples/cg/partition.c numbers a box), columns ascending within a row."""
    out = []
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                i = x + nx * (y + ny * z)
                for dz in (-1, 0, 1):
                    for dy in (-1, 0, 1):
                        for dx in (-1, 0, 1):
                            a, b, c = x + dx, y + dy, z + dz
                            if 0 <= a < nx and 0 <= b < ny and 0 <= c < nz:
                                j = a + nx * (b + ny * c)
                                if j <= i:
                                    out.append((i, j, i == j))
    return out


def write(nx, ny, nz, k, path):
    n = nx * ny * nz
    lower = box_lower(nx, ny, nz)
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write("%% HPCG %dx%dx%d, %d block(s) on the diagonal (bench/hpcg_mtx.py)\n"
                % (nx, ny, nz, k))
        f.write("%d %d %d\n" % (k * n, k * n, k * len(lower)))
        for blk in range(k):
            o = blk * n + 1
            f.write("\n".join("%d %d %s" % (i + o, j + o, "26" if d else "-1")
                              for i, j, d in lower))
            f.write("\n")


def self_test():
    import os
    import tempfile
    lower = box_lower(3, 3, 3)
    # 27 points; stored entries of the full matrix: (3 L - 2)^3 = 343, lower half with diagonal
    assert len(lower) == (343 + 27) // 2 and sum(d for _, _, d in lower) == 27
    assert all(j <= i for i, j, _ in lower)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.mtx")
        write(3, 3, 3, 2, path)
        lines = open(path).read().split("\n")
        assert lines[2] == "54 54 370"
        entries = [tuple(map(int, l.split()[:2])) for l in lines[3:] if l]
        assert len(entries) == 370 and max(max(e) for e in entries) == 54
        # no entry couples the two blocks
        assert all((i <= 27) == (j <= 27) for i, j in entries)
    print("hpcg_mtx.py: self-test passed")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 5:
        sys.exit(__doc__)
    nx, ny, nz, k = (int(v) for v in argv[:4])
    if min(nx, ny, nz, k) < 1:
        sys.exit("hpcg_mtx.py: NX NY NZ K must be positive")
    write(nx, ny, nz, k, argv[4])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
