"""Measurement: should record bodies be stored zstd-compressed (issue 16, part 4)?

On the real Claude Code transcripts in ``$ABCD_FIXTURES`` (default
``/work/shared/fixtures/claude-code-log``; every ``*.jsonl`` under it), each redacted
by the real capture into a record, then, per zstd level: the size ratio (plain bytes /
compressed bytes over the whole set), the compressor's MB/s (streaming, as a capture
would write), the decompressor's MB/s (streaming, as a reader would read), and the
capture MB/s with and without compression (redaction + write, the whole set). Needs
the ``zstandard`` package (the standard library has no zstd before Python 3.14).
With ``--bigfile-mib N`` it also measures, streaming, the seeded synthetic transcript
of ``bench/bigfile.py`` (``N`` MiB with one ``--long-line-mib`` line; written in pieces
to a temp file, compressed and decompressed 1 MiB at a time, never held whole): its
ratio and MB/s per level (``bigfile`` in the JSON). The last stdout line is one JSON
object.

    .venv/bin/python bench/compression.py [--levels 1,3,9,19] [--repeat 3]
        [--bigfile-mib 256 --long-line-mib 64]
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--levels", default="1,3,9,19")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bigfile-mib", type=int, default=0, help="also bigfile.py's transcript (MiB)")
    ap.add_argument("--long-line-mib", type=int, default=64)
    args = ap.parse_args(argv)
    try:
        import zstandard
    except ImportError:
        raise SystemExit("bench/compression.py needs the zstandard package (not a dependency "
                         "of abcd: records are stored plain): .venv/bin/pip install zstandard")

    fixtures = Path(os.environ.get("ABCD_FIXTURES", "/work/shared/fixtures/claude-code-log"))
    files = sorted(fixtures.rglob("*.jsonl"))
    c.check(bool(files), f"no *.jsonl under {fixtures}")
    base, env = c.isolated_env("abcd-bench-zstd-")
    c.apply_env(env)
    try:
        from abcd_daemon.config import Config
        from abcd_daemon.paths import Home
        from abcd_daemon.queue.scanners import ScannerPool
        from abcd_daemon.store.capture import capture
        from abcd_daemon.store.lane import Lane
        from abcd_daemon.store.meta import CaptureMeta

        home = Home(env["ABCD_HOME"])
        home.root.mkdir(mode=0o700, parents=True)
        config = Config()
        scanner = ScannerPool(config).get("")
        lane = Lane(home, "f" * 40)
        records: list[bytes] = []
        t0 = time.perf_counter()
        for i, path in enumerate(files):
            raw = path.read_bytes()
            if not raw:
                continue
            result = capture(lane, raw, CaptureMeta(session_id=f"s{i}"), scanner=scanner,
                             config=config, now_ns=time.time_ns())
            records.append((lane.records / result.record.name).read_bytes())
        capture_s = time.perf_counter() - t0
        plain = sum(len(r) for r in records)
        source = sum(p.stat().st_size for p in files)
        capture_mbps = source / c.MB / capture_s
        print(f"{len(records)} real transcripts, {source / c.MB:.2f} MB; records {plain / c.MB:.2f} MB; "
              f"capture (plain) {capture_mbps:.2f} MB/s")
        out = {"transcripts": len(records), "source_mb": round(source / c.MB, 2),
               "record_mb": round(plain / c.MB, 2), "capture_plain_mb_per_s": round(capture_mbps, 2),
               "levels": {}}
        t = time.perf_counter()
        for _ in range(args.repeat):
            for r in records:
                io.BytesIO(r).read()
        plain_read = plain * args.repeat / c.MB / (time.perf_counter() - t)
        out["plain_read_mb_per_s"] = round(plain_read, 1)
        for level in (int(x) for x in args.levels.split(",")):
            cctx = zstandard.ZstdCompressor(level=level)
            dctx = zstandard.ZstdDecompressor()
            t = time.perf_counter()
            for _ in range(args.repeat):
                packed = []
                for r in records:
                    sink = io.BytesIO()
                    with cctx.stream_writer(sink, closefd=False) as w:
                        for k in range(0, len(r), 1 << 20):
                            w.write(r[k:k + (1 << 20)])
                    packed.append(sink.getvalue())
            comp_s = (time.perf_counter() - t) / args.repeat
            small = sum(len(p) for p in packed)
            t = time.perf_counter()
            for _ in range(args.repeat):
                for p in packed:
                    with dctx.stream_reader(io.BytesIO(p)) as rd:
                        while rd.read(1 << 20):
                            pass
            dec_s = (time.perf_counter() - t) / args.repeat
            row = {"ratio": round(plain / small, 2), "compress_mb_per_s": round(plain / c.MB / comp_s, 1),
                   "decompress_mb_per_s": round(plain / c.MB / dec_s, 1),
                   "capture_mb_per_s": round(source / c.MB / (capture_s + comp_s), 2)}
            out["levels"][str(level)] = row
            print(f"zstd -{level}: ratio {row['ratio']}x, compress {row['compress_mb_per_s']} MB/s, "
                  f"decompress {row['decompress_mb_per_s']} MB/s, capture with it "
                  f"{row['capture_mb_per_s']} MB/s")
        if args.bigfile_mib:
            out["bigfile"] = _bigfile(base, args, zstandard)
        c.emit_json(out)
    finally:
        c.cleanup(base)
    return 0


def _bigfile(base: Path, args, zstandard) -> dict:
    """Ratio and streaming MB/s per level on bench/bigfile.py's transcript."""
    import bigfile

    maker = c.TranscriptMaker(16, cwd=str(base), home=os.path.expanduser("~"))
    path, packed = base / "big.jsonl", base / "big.jsonl.zst"
    size, _lines = bigfile.write_transcript(path, maker, maker.session_id(), args.bigfile_mib,
                                            args.long_line_mib)
    out = {"mib": round(size / c.MIB, 1), "long_line_mib": args.long_line_mib, "levels": {}}
    for level in (int(x) for x in args.levels.split(",") if int(x) <= 9):
        t = time.perf_counter()
        with open(path, "rb") as src, open(packed, "wb") as dst:
            zstandard.ZstdCompressor(level=level).copy_stream(src, dst, read_size=1 << 20,
                                                              write_size=1 << 20)
        comp_s = time.perf_counter() - t
        small = packed.stat().st_size
        t = time.perf_counter()
        with open(packed, "rb") as src, zstandard.ZstdDecompressor().stream_reader(src) as rd:
            while rd.read(1 << 20):
                pass
        dec_s = time.perf_counter() - t
        row = {"ratio": round(size / small, 2), "compress_mb_per_s": round(size / c.MB / comp_s, 1),
               "decompress_mb_per_s": round(size / c.MB / dec_s, 1)}
        out["levels"][str(level)] = row
        print(f"bigfile {out['mib']} MiB, zstd -{level}: ratio {row['ratio']}x, compress "
              f"{row['compress_mb_per_s']} MB/s, decompress {row['decompress_mb_per_s']} MB/s")
    path.unlink()
    packed.unlink()
    return out


if __name__ == "__main__":
    raise SystemExit(main())
