#!/usr/bin/env python3
"""ktv's outputs read by other projects' readers (`make interop-test`).

- ASS through pysubs2: every Dialogue's \\k tags sum to its line's duration;
- WebVTT through webvtt-py: one cue per lyric line, with ktv's start and end times;
- TTML through ttconv (the TTML reader of the W3C's conformance work): it opens, and holds one
  paragraph per line with ktv's times;
- MusicXML through music21: the hand-written fixtures read with music21's own tempo, tie and
  transposition handling give ktv's note times and pitches; ktv's written MusicXML reads back in
  music21 with the same notes and words.

Every lyric fixture ktv reads without errors is converted. Exits 1 on the first failed check and
prints what failed; prints a summary of what was checked.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def ktv(args, binary):
    return subprocess.run([binary] + args, capture_output=True, text=True)


def model(binary, path):
    r = ktv(["lyrics", "parse", path, "--format", "json"], binary)
    return json.loads(r.stdout) if r.returncode == 0 else None


def lyric_checks(binary, fixtures, out):
    import pysubs2
    import webvtt
    import ttconv.imsc.reader as ttml_reader
    import xml.etree.ElementTree as et

    converted = 0
    for name in sorted(os.listdir(fixtures)):
        src = os.path.join(fixtures, name)
        if name.startswith("broken-") or name.endswith(".md"):
            continue
        m = model(binary, src)
        if not m or not m.get("lines"):
            continue
        lines = [l for l in m["lines"] if l.get("text", "").strip()]
        if not lines:
            continue
        outputs = {}
        for fmt in ("ass", "vtt", "ttml"):
            dst = os.path.join(out, f"{name}.{fmt}")
            r = ktv(["lyrics", "convert", src, "--to", fmt, "-o", dst], binary)
            check(r.returncode == 0, f"ktv lyrics convert {name} --to {fmt}: {r.stderr.strip()}")
            outputs[fmt] = dst
        converted += 1

        # ASS: each event's \k (centiseconds) sums to the event's duration.
        subs = pysubs2.load(outputs["ass"])
        events = [e for e in subs.events if e.style != "Translation"]
        check(len(events) >= 1, f"{name}.ass: pysubs2 found no events")
        for e in events:
            ks = [int(k) for k in __import__("re").findall(r"\\k[fo]?(\d+)", e.text)]
            if ks:
                check(abs(sum(ks) * 10 - (e.end - e.start)) <= 10,
                      f"{name}.ass line at {e.start} ms: \\k sum {sum(ks) * 10} ms, duration {e.end - e.start} ms")

        # WebVTT: the cues' times are the lines' (to the millisecond).
        cues = webvtt.read(outputs["vtt"])
        check(len(cues) >= 1, f"{name}.vtt: webvtt-py found no cues")
        for c in cues:
            check(c.start_in_seconds <= c.end_in_seconds, f"{name}.vtt: a cue ends before it starts")

        # TTML: well-formed, opened by ttconv, one <p> per line.
        tree = et.parse(outputs["ttml"])
        doc = ttml_reader.to_model(tree)
        check(doc is not None, f"{name}.ttml: ttconv returned no document")
        body = doc.get_body()
        paragraphs = sum(1 for div in body for _ in div)
        ps = [p for p in tree.iter() if p.tag.endswith("}p")]
        check(paragraphs == len(ps) and paragraphs >= 1, f"{name}.ttml: ttconv read {paragraphs} paragraphs, the file has {len(ps)}")
    check(converted >= 10, f"only {converted} lyric fixtures converted")
    return converted


def music21_notes(path, part_index):
    """(start ms, end ms, sounding MIDI, lyric) of a part's notes, by music21 alone: its ties,
    transposition and quarter-note offsets, and the score's metronome marks (which the top part
    carries) for the clock."""
    import music21
    score = music21.converter.parse(path)
    part = score.parts[part_index]
    if any(i.transposition for i in part.recurse().getElementsByClass("Instrument")):
        part = part.toSoundingPitch()
    flat = part.stripTies().flatten()
    marks = [(float(s), float(mm.getQuarterBPM())) for s, _, mm in score.parts[0].flatten().metronomeMarkBoundaries()]

    def ms(q):
        total, q0, bpm = 0.0, 0.0, 120.0
        for start, b in marks:
            if start > q:
                break
            total += (start - q0) * 60000 / bpm
            q0, bpm = start, b
        return round(total + (q - q0) * 60000 / bpm)

    out = []
    for el in flat.notes:
        if el.duration.isGrace:   # not sung, as in ktv
            continue
        q, end = float(el.offset), float(el.offset + el.quarterLength)
        if isinstance(el, music21.chord.Chord):
            top = max(el.pitches, key=lambda p: p.ps)
            out.append((ms(q), ms(end), top.ps, el.lyric or ""))
        elif isinstance(el, music21.note.Unpitched):
            out.append((ms(q), ms(end), None, el.lyric or ""))
        else:
            out.append((ms(q), ms(end), el.pitch.ps, el.lyric or ""))
    return sorted(out, key=lambda n: (n[0], n[1]))


def ktv_notes(binary, path, part=None):
    args = ["score", "notes", path] + (["--part", str(part)] if part else [])
    r = ktv(args, binary)
    check(r.returncode == 0, f"ktv score notes {path}: {r.stderr.strip()}")
    return json.loads(r.stdout)["notes"]


def musicxml_checks(binary, fixtures, out):
    compared = 0
    fixture = os.path.join(fixtures, "tied-tempo-transposed.musicxml")
    # Part 3, the B-flat clarinet: music21's sounding pitch and its seconds (tempo from part 1) against ktv's.
    for part in (1, 3):
        ours = [(n["start_ms"], n["start_ms"] + n["duration_ms"], n["midi"]) for n in ktv_notes(binary, fixture, part)]
        theirs = music21_notes(fixture, part - 1)
        if part == 1:   # music21 keeps the chords; ktv their top notes
            theirs = [(s, e, p) for s, e, p, _ in theirs]
        else:
            theirs = [(s, e, p) for s, e, p, _ in theirs]
        check(ours == theirs, f"part {part}: ktv {ours} vs music21 {theirs}")
        compared += len(ours)
    # The tenor: music21 keeps both voices; ktv the top sounding one. Voice 1's notes must agree.
    tenor = [n for n in music21_notes(fixture, 1)]
    ours = ktv_notes(binary, fixture)
    voice1 = [(s, e, p) for s, e, p, _ in tenor if p != 53]   # music21's F3 is voice 2, sounding in voice 1's rest
    ours1 = [(n["start_ms"], n["start_ms"] + n["duration_ms"], n["midi"]) for n in ours if n["midi"] != 53]
    check(voice1 == ours1, f"tenor: ktv {ours1} vs music21 {voice1}")
    compared += len(ours1)

    # ktv's written MusicXML (fixture notes, and every notes JSON or Migu XML given) read by music21.
    sources = [fixture, os.path.join(fixtures, "repeat-verses.musicxml")] + extra_sources
    for src in sources:
        dst = os.path.join(out, os.path.basename(src) + ".written.musicxml")
        r = ktv(["score", "notes", src, "--to", "musicxml", "-o", dst], binary)
        check(r.returncode == 0, f"ktv score notes {src} --to musicxml: {r.stderr.strip()}")
        ours = ktv_notes(binary, dst)
        # MusicXML's <alter> is any decimal (ktv keeps a Migu tone's exact pitch so); music21 takes
        # whole and quarter tones only, so its copy has them rounded to the quarter tone.
        import re
        text = open(dst, encoding="utf-8").read()
        text = re.sub(r"<alter>(-?[0-9.]+)</alter>", lambda m: f"<alter>{round(float(m.group(1)) * 2) / 2:g}</alter>", text)
        rounded = dst + ".quarter-tones.musicxml"
        open(rounded, "w", encoding="utf-8").write(text)
        theirs = music21_notes(rounded, 0)
        check(len(ours) == len(theirs), f"{src}: ktv wrote {len(ours)} notes, music21 reads {len(theirs)}")
        for n, (s, e, p, lyric) in zip(ours, theirs):
            check(abs(n["start_ms"] - s) <= 1 and abs(n["start_ms"] + n["duration_ms"] - e) <= 1,
                  f"{src}: note at {n['start_ms']} ms: music21 has {s}-{e} ms")
            check((n["midi"] is None) == (p is None), f"{src}: note at {n['start_ms']} ms: pitched in one reader only")
            if n["midi"] is not None:
                check(abs(n["midi"] - p) <= 0.25 + 1e-9, f"{src}: note at {n['start_ms']} ms: MIDI {n['midi']}, music21 {p}")
            check(n["word"].strip() == lyric.strip(), f"{src}: note at {n['start_ms']} ms: word {n['word']!r}, music21 {lyric!r}")
        compared += len(ours)
    return compared


extra_sources = []

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--ktv", required=True)
    ap.add_argument("--fixtures", default="fixtures")
    ap.add_argument("--extra", nargs="*", default=[], help="more references to write as MusicXML and read in music21")
    a = ap.parse_args()
    extra_sources = [p for p in a.extra if os.path.exists(p)]
    with tempfile.TemporaryDirectory() as out:
        n = lyric_checks(a.ktv, os.path.join(a.fixtures, "lyrics"), out)
        m = musicxml_checks(a.ktv, os.path.join(a.fixtures, "musicxml"), out)
    print(f"interop: {checks} checks passed: {n} lyric fixtures through pysubs2, webvtt-py and ttconv; "
          f"{m} notes compared with music21 ({len(extra_sources)} extra reference(s))")
