#!/usr/bin/env python3
"""The HTML pages in a real browser: Debian's chromium, headless, driven by Playwright for Python.

    pages_test.py --ktv .build/release/ktv --out .build/browser [--shared ../shared]

Makes its inputs (a hostile take with audio, a batch of 200+ generated takes with failures and a
hostile row), adds the shared scenes and a real 50-line song when ../shared is there, writes the
pages with ktv, and checks each one as a user's browser runs it: no console error and no script
but the page's own; as many line panels, notes and table rows as the JSON says; the player's time
marks the line being sung `current`; a click on a line seeks the player there; the dashboard's
histogram adds up; the table filters and sorts. Screenshots go to OUT/screenshots/.
Exit 0 when every check passed, 1 otherwise.
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys
import time
import wave

from playwright.sync_api import sync_playwright

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HOSTILE_WORD = "</script><script>alert('word')</script>"
HOSTILE_ID = "<img src=x onerror=alert('id')>"
failures = []


def check(ok, what):
    print(("  ok   " if ok else "  FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, ok_codes=(0,)):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in ok_codes:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p


def hostile_inputs(out):
    """A reference whose words are markup, and an audio take of it whose file name is markup."""
    notes, lines, t = [], [], 1000
    words = [["你", "好", HOSTILE_WORD], ["<b>bold</b>", "&amp;", "word"], ["la", "la", "la"]]
    for li, ws in enumerate(words):
        start = t
        for k, w in enumerate(ws):
            notes.append({"start_ms": t, "duration_ms": 450, "midi": 60 + 2 * k + li, "word": w, "line": li})
            t += 500
        lines.append({"start_ms": start, "end_ms": t, "text": " ".join(ws)})
        t += 700
    ref = os.path.join(out, "hostile.notes.json")
    with open(ref, "w") as f:
        json.dump({"notes": notes, "lines": lines}, f, ensure_ascii=False)
    # The take: each note as a sine with harmonics, 100 ms late, at 16 kHz.
    rate, latency = 16000, 0.1
    total = t / 1000 + 1
    samples = [0.0] * int(total * rate)
    for k, n in enumerate(notes):
        f0 = 440 * 2 ** ((n["midi"] - 69) / 12)
        a = int((n["start_ms"] / 1000 + latency) * rate)
        ph = 0.0
        for i in range(int(n["duration_ms"] / 1000 * rate)):
            # The last note yodels two octaves up for 150 ms in its middle: pitch off the scale.
            yodel = k == len(notes) - 1 and 150 <= i * 1000 / rate < 300
            ph += 2 * math.pi * f0 * (4 if yodel else 1) / rate
            samples[a + i] = 0.3 * math.sin(ph) + 0.1 * math.sin(2 * ph) + 0.05 * math.sin(3 * ph)
    take = os.path.join(out, HOSTILE_ID + ".wav")
    with wave.open(take, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(max(-1, min(1, s)) * 32000)) for s in samples))
    return take, ref


def take_pages(ktv, out, shared):
    """(name, page path, has audio) for every take page to check."""
    pages = []
    take, ref = hostile_inputs(out)
    page = os.path.join(out, "hostile.html")
    run([ktv, "score", take, "--reference", ref, "--html", page, "--format", "json", "-o", os.devnull])
    pages.append(("hostile", page, True))
    scenes = os.path.join(shared, "scenes", "dev-11")
    if os.path.isdir(scenes):
        for name in ["good", "late_400ms", "drone"]:
            page = os.path.join(out, f"scene-{name}.html")
            run([ktv, "score", os.path.join(scenes, f"take_{name}.flac"), "--reference", os.path.join(scenes, "reference.xml"),
                 "--accompaniment", os.path.join(scenes, "accompaniment.flac"), "--html", page, "-o", os.devnull])
            pages.append((f"scene {name}", page, True))
    else:
        print(f"  skip the shared scenes: {scenes} is not there")
    agora = os.path.join(shared, "agora", "LrcView-iOS", "Tests", "Resource")
    if os.path.isdir(agora):
        page = os.path.join(out, "qilixiang-good2.html")
        run([ktv, "score", os.path.join(agora, "qilixiang_good2_50ms_pitch.txt"), "--pitch-interval-ms", "50",
             "--reference", os.path.join(agora, "660250.xml"), "--html", page, "-o", os.devnull])
        pages.append(("七里香 good2 (50 lines)", page, False))
        # good1: 21 of the 50 lines judged, line 12 wider than the one-line zoom's view.
        page = os.path.join(out, "qilixiang-good1.html")
        run([ktv, "score", os.path.join(agora, "qilixiang_good1_50ms_pitch.txt"), "--pitch-interval-ms", "50",
             "--reference", os.path.join(agora, "660250.xml"), "--html", page, "-o", os.devnull])
        pages.append(("七里香 good1 (50 lines)", page, False))
    else:
        print(f"  skip the real song: {agora} is not there")
    return pages


def page_data(page):
    return page.evaluate("JSON.parse(document.getElementById('ktv-data').textContent)")


def open_page(browser, path, shots, name):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors, dialogs = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto("file://" + os.path.abspath(path))
    wait_for(page, "document.body.dataset.ready === '1'", 15)
    return page, errors, dialogs


def wait_for(page, expression, seconds):
    """Polls from outside the page: Playwright's wait_for_function evaluates strings inside it,
    which the pages' Content-Security-Policy (rightly) refuses."""
    deadline = time.time() + seconds
    while not page.evaluate(expression):
        if time.time() > deadline:
            raise TimeoutError(f"{expression} still false after {seconds} s")
        page.wait_for_timeout(50)


# Boxes in the page's pixels: [left, top, right, bottom].
BOXES = """sel => [...document.querySelectorAll(sel)].filter(e => e.getAttribute('visibility') !== 'hidden')
  .map(e => { const r = e.getBoundingClientRect(); return { key: e.dataset.lineScore || e.dataset.note || e.textContent, box: [r.left, r.top, r.right, r.bottom] }; })"""


def view_box(page):
    r = page.evaluate("(() => { const r = scroller.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()")
    return r


def inside(box, view):
    return box[0] >= view[0] - 0.5 and box[2] <= view[2] + 0.5


# Each matching element's text as laid out: the line boxes it takes and its right edge.
TEXT_RUNS = """sel => [...document.querySelectorAll(sel)].map(e => {
  const w = document.createTreeWalker(e, NodeFilter.SHOW_TEXT), n = w.nextNode(), r = document.createRange();
  if (!n) return { text: '', lines: 0, right: 0 };
  r.selectNodeContents(n);
  const rects = [...r.getClientRects()];
  return { text: n.textContent, lines: new Set(rects.map(q => Math.round(q.top))).size, right: Math.max(...rects.map(q => q.right)) };
})"""


def check_graph_labels(page, lines, where):
    """Every judged line's score labelled, no two labels touching, every time label wholly in view."""
    labels = page.evaluate(BOXES, "#graph text.lscore")
    judged = {str(l["line"]) for l in lines if l["judged"]}
    have = {l["key"] for l in labels}
    check(judged <= have, f"{where}: each of the {len(judged)} judged lines' scores labelled ({len(judged & have)} are)")
    clash = [(a["key"], b["key"]) for i, a in enumerate(labels) for b in labels[i + 1:]
             if a["box"][0] < b["box"][2] and b["box"][0] < a["box"][2] and a["box"][1] < b["box"][3] and b["box"][1] < a["box"][3]]
    check(not clash, f"{where}: no two of the {len(labels)} score labels overlap ({clash[:3]})")
    view = view_box(page)
    ticks = page.evaluate(BOXES, "#graph text.tick")
    cut = [t["key"] for t in ticks if not inside(t["box"], view) and t["box"][2] > view[0] and t["box"][0] < view[2]]
    shown = [t for t in ticks if inside(t["box"], view)]
    check(not cut and shown, f"{where}: time labels wholly in view, first {shown[0]['key'] if shown else None!r} (cut: {cut})")


def check_line_click(page, lines, number, shots, shot):
    """At the one-line zoom, a click on line `number` shows it whole: its first and last notes and words in view."""
    line = next(l for l in lines if l["line"] == number)
    page.locator("#oneline").click()
    page.wait_for_timeout(200)
    page.locator(f"#lines [data-line='{number}']").click()
    page.wait_for_timeout(300)
    view = view_box(page)
    notes = page.evaluate(BOXES, f"#graph [data-note^='{number}.']")
    first, last = notes[0], notes[-1]
    check(len(notes) == len(line["notes"]) and inside(first["box"], view) and inside(last["box"], view),
          f"line {number} clicked: its notes {first['key']}…{last['key']} in view {view[0]:.0f}-{view[2]:.0f} "
          f"({first['box'][0]:.0f}-{last['box'][2]:.0f})")
    word = line["notes"][-1]["word"].strip()
    # The word drawn under the last note (the nearest with its text).
    words = sorted((w for w in page.evaluate(BOXES, "#graph text.word") if w["key"] == word), key=lambda w: abs(w["box"][0] - last["box"][0]))
    check(bool(words) and abs(words[0]["box"][0] - last["box"][0]) < 2 and inside(words[0]["box"], view),
          f"line {number} clicked: its last word {word!r} drawn under its note and in view")
    check_graph_labels(page, lines, f"line {number} clicked")
    page.screenshot(path=os.path.join(shots, shot))


def check_take(browser, name, path, has_audio, shots):
    print(f"{name}: {path}")
    page, errors, dialogs = open_page(browser, path, shots, name)
    data = page_data(page)
    score = data["score"]
    lines = score["lines"]
    drawn = sum(1 for row in data["drawn_cents"] for c in row if c is not None)
    check(page.locator("[data-line]").count() == len(lines), f"{len(lines)} line panels")
    check(page.locator("[data-note]").count() == drawn, f"{drawn} notes drawn")
    check(page.locator("audio").count() == 1, "one <audio>")
    check_graph_labels(page, lines, "whole song")
    check(page.evaluate("(() => { const c = document.querySelector('#graph path.sung'), n = document.querySelector('#graph [data-note]');"
                        " return !!c && !!n && !!(c.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING); })()"),
          "the notes are drawn over the sung pitch")
    numbers = page.evaluate(TEXT_RUNS, "#lines .num")
    check(len(numbers) == len(lines) and max(n["right"] for n in numbers) - min(n["right"] for n in numbers) < 0.5,
          f"the {len(numbers)} line numbers of the list end in one column (9 over 10)")
    if name.startswith("七里香 good1"):
        page.screenshot(path=os.path.join(shots, "qilixiang-good1-whole-song.png"))
        check_line_click(page, lines, 12, shots, "qilixiang-good1-line-12.png")
    if has_audio:
        # The play head: half-way into a note of a judged line, on the recording's clock.
        target = next((l, n) for l in lines if l["judged"] for n in l["notes"] if n["duration_ms"] > 0)
        line, note = target
        t = page.evaluate(f"songToTake({note['start_ms'] + note['duration_ms'] / 2}) / 1000")
        page.evaluate(f"document.getElementById('player').currentTime = {t}")
        try:
            wait_for(page, f"document.querySelector(\"[data-line='{line['line']}'].current\") !== null", 5)
            check(True, f"player at {t:.2f} s marks line {line['line']} current")
        except Exception:
            now = page.evaluate("[...document.querySelectorAll('.current')].map(e => e.dataset.line)")
            check(False, f"player at {t:.2f} s marks line {line['line']} current (current: {now})")
        check(page.locator(".current[data-line]").count() == 1, "exactly one current line")
        # A click on another line seeks the player to that line's start.
        other = lines[-1] if lines[-1]["line"] != line["line"] else lines[0]
        # Where the player was sent (its first seek after the click; it plays on from there).
        page.evaluate("window.__seeks = []; document.getElementById('player').addEventListener('seeking', e => __seeks.push(e.target.currentTime))")
        page.locator(f"[data-line='{other['line']}']").click()
        wait_for(page, "window.__seeks.length > 0", 5)
        want = page.evaluate(f"Math.max(0, songToTake({other['start_ms']}) / 1000)")
        got = page.evaluate("window.__seeks[0]")
        check(abs(got - want) < 0.01, f"click on line {other['line']} seeks to {want:.2f} s (player at {got:.2f} s)")
        page.evaluate("document.getElementById('player').pause()")
    if name == "hostile":
        texts = page.locator("#lines").inner_text()
        check(HOSTILE_WORD in texts, "the markup word shows as text")
        check(HOSTILE_ID in page.locator("#title").inner_text(), "the markup file name shows as the title's text")
        check(page.locator("#lines script, #lines b, #title img").count() == 0, "no element made from the words")
        check(page.locator("#graph .offscale").count() >= 1, "the yodel two octaves up is an arrow at the edge")
    # Zoom down to one line and back; the page stays whole.
    page.locator("#oneline").click()
    page.wait_for_timeout(200)
    page.screenshot(path=os.path.join(shots, name.split(" (")[0].replace(" ", "-") + "-one-line.png"))
    page.locator("#whole").click()
    page.wait_for_timeout(200)
    check(page.locator("[data-note]").count() == drawn, "the notes survive zooming")
    page.screenshot(path=os.path.join(shots, name.split(" (")[0].replace(" ", "-") + ".png"), full_page=True)
    check(not dialogs, f"no script from the data ran (dialogs: {dialogs})")
    check(not errors, f"no console errors ({errors[:3]})")
    page.close()


def batch(ktv, out):
    """200 generated takes plus the generator's bad rows and a hostile row, with pages and a report."""
    folder = os.path.join(out, "batch")
    run([sys.executable, os.path.join(ROOT, "examples", "spark", "make_takes.py"), folder, "--takes", "200"])
    manifest = os.path.join(folder, "manifest.jsonl")
    with open(manifest) as f:
        rows = [json.loads(l) for l in f if l.strip()]
    hostile = dict(rows[0])
    hostile["id"] = HOSTILE_ID
    with open(manifest, "a") as f:
        f.write(json.dumps(hostile) + "\n")
        f.write(json.dumps({"id": "bad-" + HOSTILE_WORD, "take": "/nonexistent/" + HOSTILE_WORD, "reference": rows[0]["reference"]}) + "\n")
    results = os.path.join(folder, "results.jsonl")
    if os.path.exists(results):
        os.remove(results)
    run([ktv, "batch", manifest, "-o", results, "--html-dir", os.path.join(folder, "pages"), "--progress", "never"], ok_codes=(0, 1))
    dashboard = os.path.join(folder, "dashboard.html")
    run([ktv, "batch", "report", results, "--html", dashboard, "--csv", os.path.join(folder, "takes.csv"),
         "--summary", os.path.join(folder, "summary.json")])
    with open(os.path.join(folder, "summary.json")) as f:
        return dashboard, json.load(f), len(rows) + 2


def check_dashboard(browser, path, summary, rows, shots):
    print(f"dashboard: {path}")
    page, errors, dialogs = open_page(browser, path, shots, "dashboard")
    check(summary["ids"] == rows and rows >= 200, f"{rows} manifest rows, {summary['ids']} ids in the summary")
    check(page.locator("tr[data-id]").count() == summary["ids"], f"{summary['ids']} table rows")
    counts = page.evaluate("[...document.querySelectorAll('[data-bin]')].map(e => Number(e.dataset.count))")
    scored = sum(d["count"] for d in summary["scores"].values())
    check(sum(counts) == scored, f"histogram bars add up to {scored} scored takes ({sum(counts)})")
    check(page.locator("[data-reason]").count() == summary["failed"], f"{summary['failed']} failures listed")
    reasons = set(page.evaluate("[...document.querySelectorAll('[data-reason]')].map(e => e.dataset.reason)"))
    check(reasons == set(summary["failures_by_reason"]), f"failure reasons {sorted(reasons)}")
    page.locator("#filter").fill("bad-")
    want = sum(1 for _ in page.evaluate("JSON.parse(document.getElementById('ktv-data').textContent).takes.filter(t => [t.id, t.status, t.rules, t.top_finding, t.top_finding_message, t.reason, t.error].filter(Boolean).join(' ').toLowerCase().includes('bad-'))"))
    check(page.locator("#rows tr").count() == want and want >= 4, f"filter 'bad-' shows {want} rows")
    page.locator("#filter").fill("")
    page.locator("#status").select_option("error")
    check(page.locator("#rows tr").count() == summary["failed"], f"status error shows {summary['failed']} rows")
    page.locator("#status").select_option("")
    page.locator("th[data-key='score_100']").click()
    scores = page.evaluate("[...document.querySelectorAll('#rows tr')].map(r => r.children[3].textContent).filter(s => s !== '').map(Number)")
    check(scores == sorted(scores) and len(scores) == scored, "sorting by score_100 puts the lowest first")
    links = page.locator("#rows a").count()
    check(links == scored, f"{links} takes link to their pages")
    check(HOSTILE_ID in page.locator("#rows").inner_text(), "the markup id shows as text")
    ids = page.evaluate(TEXT_RUNS, "#rows td.id")
    wrapped = [i["text"] for i in ids if i["lines"] != 1]
    check(len(ids) == summary["ids"] and not wrapped, f"every id of the table on one line (wrapped: {wrapped[:3]})")
    page.screenshot(path=os.path.join(shots, "dashboard.png"), full_page=False)
    check(not dialogs, f"no script from the data ran (dialogs: {dialogs})")
    check(not errors, f"no console errors ({errors[:3]})")
    # A take's page from the batch opens too.
    first = page.locator("#rows a").first.get_attribute("href")
    sub, errors2, dialogs2 = open_page(browser, os.path.join(os.path.dirname(path), first), shots, "batch take")
    check(sub.locator("[data-line]").count() > 0 and not errors2 and not dialogs2, f"the linked page {first} opens without errors")
    sub.close()
    page.close()


def check_one_take_dashboard(browser, ktv, out, shots):
    """A batch of one take says "1 take", never "1 takes"."""
    folder = os.path.join(out, "batch")
    with open(os.path.join(folder, "manifest.jsonl")) as f:
        first = f.readline()
    one = os.path.join(out, "one")
    os.makedirs(one, exist_ok=True)
    with open(os.path.join(one, "manifest.jsonl"), "w") as f:
        f.write(first)
    results = os.path.join(one, "results.jsonl")
    if os.path.exists(results):
        os.remove(results)
    p = run([ktv, "batch", os.path.join(one, "manifest.jsonl"), "-o", results, "--jobs", "1", "--progress", "never"])
    check(" of 1 row in " in p.stderr and "with 1 job" in p.stderr, f"ktv batch counts 1 row and 1 job ({p.stderr.splitlines()[0]})")
    dashboard = os.path.join(one, "dashboard.html")
    run([ktv, "batch", "report", results, "--html", dashboard])
    print(f"one-take dashboard: {dashboard}")
    page, errors, dialogs = open_page(browser, dashboard, shots, "one-take dashboard")
    text = page.locator("body").inner_text()
    check("1 takes" not in text and "1 result lines" not in text, "no '1 takes' or '1 result lines'")
    check("· 1 take" in page.locator("#hist").inner_text() and "1 of 1 take shown" in text and "1 result line read" in text,
          "the histogram, the table and the facts say 1 take, 1 result line")
    check(not errors and not dialogs, f"no console errors ({errors[:3]})")
    page.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ktv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--browser", default="/usr/bin/chromium")
    args = ap.parse_args()
    ktv = os.path.abspath(args.ktv)
    os.makedirs(args.out, exist_ok=True)
    shots = os.path.join(args.out, "screenshots")
    os.makedirs(shots, exist_ok=True)
    started = time.time()
    pages = take_pages(ktv, args.out, args.shared)
    dashboard, summary, rows = batch(ktv, args.out)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.browser, args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
        print(f"browser: {browser.version}")
        for name, path, has_audio in pages:
            check_take(browser, name, path, has_audio, shots)
        check_dashboard(browser, dashboard, summary, rows, shots)
        check_one_take_dashboard(browser, ktv, args.out, shots)
        browser.close()
    print(f"{len(failures)} check(s) failed in {time.time() - started:.0f} s; screenshots in {shots}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
