"""``openbook studio`` end to end, in the system's headless Chromium: load Adult, declare QIs, SA
and a hierarchy, measure, run two algorithms, compare, publish, and check the release written
with ``openbook check`` — and that the same release comes out of the command lines the page
shows; a malformed upload; a cancelled long run; requests from another origin or host; names
that would write outside the output folder. Every step leaves a screenshot in
``build/studio-screenshots/`` (the run prints where)."""

from __future__ import annotations

import functools
import http.server
import io
import json
import re
import shlex
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from openbook.cli import main

pytestmark = pytest.mark.slow

#: the QIs the tests declare (Adult's workclass and native-country are dropped)
QIS = ["age", "education", "marital-status", "race", "sex"]


def _expect():
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)  # a publish writes, reads back and renders the report
    return expect


def _load(pg, studio, dataset="adult"):
    expect = _expect()
    pg.page.goto(studio.url)
    pg.page.select_option("#dataset", dataset)
    pg.page.click("#load-dataset")
    expect(pg.page.locator("#banner-text")).to_have_text(re.compile(f"loaded {dataset}: "))
    expect(pg.page.locator("#status")).to_contain_text(f"{dataset} — ")


def _cli(capsys, *argv):
    """``openbook ARGV`` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _run_ids(studio):
    return [r["id"] for r in studio.request("GET", "/api/runs")[1]["runs"]]


def test_load_declare_measure_apply_compare_publish(studio, page, shots, capsys, tmp_path, monkeypatch):
    expect = _expect()
    pg = page.page
    pg.goto(studio.url)
    expect(pg.locator("#status")).to_have_text("no table loaded")
    shots(pg, "start")

    # 1. load Adult and declare: QIs, SA, a hierarchy built in the page
    _load(page, studio)
    for col in ("workclass", "native-country"):
        pg.select_option(f"select.role[data-column='{col}']", "drop")
        expect(pg.locator(f"select.role[data-column='{col}']")).to_have_value("drop")
    expect(pg.locator("#status")).to_contain_text(f"QIs: {', '.join(QIS)} · SA: occupation")
    pg.click("button.hier-open[data-column='age']")
    pg.select_option("#hier-method", "widths")
    pg.fill("#hier-param", "5,10,20")
    pg.click("#hier-build")
    expect(pg.locator("#hierarchy-panel")).to_contain_text("download age-hierarchy.csv")
    expect(pg.locator("#columns tr[data-column='age'] .hier")).to_contain_text("--widths 5,10,20")
    shots(pg, "declare")
    # the page's hierarchy is the file `openbook hierarchy` writes, byte for byte
    cli_hier = tmp_path / "age-hierarchy.csv"
    code, _, err = _cli(capsys, "hierarchy", "--dataset", "adult", "--column", "age", "--widths", "5,10,20", "-o",
                        str(cli_hier), "--json")
    assert code == 0, err
    status, page_hier = studio.request("GET", "/api/hierarchy/age")
    assert status == 200 and page_hier == cli_hier.read_text()

    # 2. measure: the raw table's identity risk is what `openbook check` says
    pg.click("#steps button[data-step=measure]")
    pg.click("#measure-button")
    expect(pg.locator("#kpi-uniques")).to_be_visible()
    code, out, err = _cli(capsys, "check", "--dataset", "adult", "--qi", ",".join(QIS), "--sa", "occupation", "--json")
    assert code == 0, err
    checked = json.loads(out)
    idt = checked["identity"]
    expect(pg.locator("#kpi-uniques b")).to_have_text(f"{idt['sample_uniques']:,}")
    expect(pg.locator("#kpi-uniques")).to_contain_text(f"({100 * idt['sample_uniqueness']:.1f}%)")
    expect(pg.locator("#kpi-prosecutor b")).to_have_text(f"{idt['prosecutor']['highest_risk']:g}")
    expect(pg.locator("#kpi-marketer b")).to_have_text(f"{100 * idt['marketer']['success_rate']:.1f}%")
    expect(pg.locator("#levels")).to_contain_text(f"{checked['levels']['n_groups']:,}")
    box = pg.locator("#histogram").bounding_box()
    assert box is not None and box["height"] > 100
    status, svg = studio.request("GET", "/api/measure.svg")
    assert status == 200 and svg.lstrip().startswith("<svg")
    shots(pg, "measure")

    # 3. apply: the default algorithm and Anatomy, one model, a seed; both run in the background
    pg.click("#steps button[data-step=apply]")
    expect(pg.locator("input.algo[value='generalized-anatomy']")).to_be_checked()  # the default
    pg.fill("#models", "l=3")
    pg.check("input.algo[value='anatomy']")
    pg.fill("#seed", "1")
    before = set(_run_ids(studio))
    pg.click("#run-button")
    expect(pg.locator("#runs tr[data-status=running]")).to_have_count(1)
    shots(pg, "running")
    expect(pg.locator("#runs tr[data-status=done]")).to_have_count(len(before) + 2, timeout=150_000)
    runs = {r["algorithm"]: r for r in studio.request("GET", "/api/runs")[1]["runs"] if r["id"] not in before}
    ga, ana = runs["generalized-anatomy"], runs["anatomy"]
    # compare: both lines, every adversary, utility, side by side
    head = pg.locator("#compare tr").first
    expect(head).to_contain_text(f"#{ga['id']} generalized-anatomy")
    expect(head).to_contain_text(f"#{ana['id']} anatomy")
    verdicts = pg.locator("#compare tr.row-verdict td")
    expect(verdicts).to_have_text(["PUBLISHABLE", "REFUSED"])
    expect(pg.locator("#compare tr.row-identity td").nth(0)).to_contain_text("identity protected")
    expect(pg.locator("#compare tr.row-identity td").nth(1)).to_contain_text("IDENTITY DISCLOSED")
    expect(pg.locator("#compare tr.row-adv-replay td").nth(0)).to_contain_text("knows the algorithm")
    for row in ("row-il", "row-are", "row-classes", "row-suppressed", "row-unresolved"):
        expect(pg.locator(f"#compare tr.{row} td")).to_have_count(2)
    ga_cert = ga["summary"]
    assert ga_cert["publishable"] and [ln["passes"] for ln in ga_cert["lines"]] == [True, True]
    assert not ana["summary"]["publishable"] and ana["summary"]["refusal"].startswith("refusing to write the release")
    expect(pg.locator("#compare tr.row-il td").nth(0)).to_have_text(
        str(float(f"{ga_cert['utility']['information_loss']:.4g}")))
    shots(pg, "compare")
    # the history: go back to the refused run's details
    pg.click(f"#runs tr[data-run='{ana['id']}'] button.details")
    expect(pg.locator("#run-details .refusal")).to_contain_text("anonymize would refuse it")
    expect(pg.locator("#run-details .refusal")).to_contain_text(ana["summary"]["refusal"])
    expect(pg.locator("#run-details .commands")).to_contain_text("--algorithm anatomy --seed 1")
    shots(pg, "history-details")

    # 4. publish the default's release: the files anonymize writes, and the report
    pg.click(f"#compare button.publish-this[data-run='{ga['id']}']")
    expect(pg.locator("#step-publish")).to_be_visible()
    pg.fill("#publish-name", "adult-ga.csv")
    pg.click("#publish-button")
    expect(pg.locator("#publish-result .published")).to_contain_text("read back and verified")
    shots(pg, "published")
    out = studio.out
    for name in ("adult-ga.csv", "adult-ga.sa.csv", "adult-ga.csv.json", "adult-ga.report.html"):
        assert (out / name).is_file(), name
        expect(pg.locator("#publish-result")).to_contain_text(str(out.resolve() / name))
    side = json.loads((out / "adult-ga.csv.json").read_text())
    assert side["certificate"]["verdict"] == "pass" and side["algorithm"]["algorithm"] == "generalized-anatomy"
    assert "n_suppressed" not in side  # anonymize's default: no counts in the sidecar
    report = (out / "adult-ga.report.html").read_text()
    assert "PUBLISHABLE" in report and "adult-ga.csv" in report
    # the written release, read back by `openbook check`
    code, out_json, err = _cli(capsys, "check", str(out / "adult-ga.csv"), "--json")
    assert code == 0, err
    back = json.loads(out_json)
    assert back["kind"] == "bucketized release" and back["levels"]["n_rows"] == 45222
    assert back["levels"]["k"] >= 5 and back["levels"]["distinct_l"] >= 3
    assert back["identity"]["prosecutor"]["highest_risk"] <= 0.2
    # anonymize's refusals: an existing release without --force, a release its certificate fails
    pg.click("#publish-button")
    expect(pg.locator("#banner-text")).to_contain_text("exists (a release); use --force to replace it")
    pg.select_option("#publish-run", str(ana["id"]))
    pg.fill("#publish-name", "adult-anatomy.csv")
    pg.click("#publish-button")
    expect(pg.locator("#banner-text")).to_have_text(ana["summary"]["refusal"])  # anonymize's words (exit 3 there)
    assert not list(out.glob("adult-anatomy*"))
    shots(pg, "refused")

    # the command lines the page shows make the same release, byte for byte (its certificate is
    # the studio's, checked above: the command certifies nothing again)
    commands = next(p for p in studio.request("GET", "/api/state")[1]["published"] if p["run"] == ga["id"])["commands"]
    monkeypatch.chdir(tmp_path)
    cli_release = tmp_path / "cli" / "adult-ga.csv"
    cli_release.parent.mkdir()
    for command in commands:
        argv = shlex.split(command)[1:]
        if argv[0] == "anonymize":
            argv[argv.index("-o") + 1] = str(cli_release)
        else:
            argv[argv.index("-o") + 1] = str(tmp_path / argv[argv.index("-o") + 1])
            (tmp_path / argv[argv.index("-o") + 1]).unlink(missing_ok=True)
        code, _, err = _cli(capsys, *argv, *(["--no-certify"] if argv[0] == "anonymize" else []), "--quiet")
        assert code == 0, (command, err)
    assert cli_release.read_bytes() == (out / "adult-ga.csv").read_bytes()
    assert cli_release.with_name("adult-ga.sa.csv").read_bytes() == (out / "adult-ga.sa.csv").read_bytes()
    page.assert_clean()


def test_a_malformed_upload_gets_one_message_and_the_studio_goes_on(studio, page, shots, tmp_path):
    expect = _expect()
    pg = page.page
    pg.goto(studio.url)
    cases = [
        ("broken.parquet", b"PAR1 these bytes are not a Parquet file", "cannot read broken.parquet as parquet"),
        ("quotes.csv", b'age,disease\n31,"flu\n45,hiv\n', "cannot read quotes.csv as csv"),
        ("binary.csv", b"\x00\x01\x02\xff\xfe\xfd", "cannot read binary.csv as csv"),
        ("empty.csv", b"", "empty"),
        ("notes.exe", b"MZ...", "the studio reads CSV or Parquet files"),
    ]
    for name, body, words in cases:
        pg.set_input_files("#upload", files=[{"name": name, "mimeType": "application/octet-stream", "buffer": body}])
        pg.click("#load-upload")
        text = pg.locator("#banner-text")
        expect(text).to_contain_text(words)
        message = text.inner_text()
        assert "\n" not in message.strip() and "Traceback" not in message, message
        if name == "broken.parquet":
            shots(pg, "bad-upload")
    # an upload above the limit is refused before its body is read
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", studio.port, timeout=30)
    conn.putrequest("POST", "/api/upload?name=huge.csv", skip_host=True)
    for k, v in (("Host", f"127.0.0.1:{studio.port}"), ("Origin", studio.url.rstrip("/")),
                 ("Content-Length", str(600 << 20)), ("Content-Type", "application/octet-stream")):
        conn.putheader(k, v)
    conn.endheaders()
    res = conn.getresponse()
    body = json.loads(res.read())
    conn.close()
    assert res.status == 413 and "above the studio's limit of 512 MB" in body["error"]
    # the server still works: a good upload, then a built-in dataset
    rows = (f"{20 + i % 40},{130 + i % 7},{'MF'[i % 2]},{['flu', 'hiv', 'cancer'][i % 3]}\n" for i in range(60))
    good = ("age,zip,sex,disease\n" + "".join(rows)).encode()
    pg.set_input_files("#upload", files=[{"name": "people.csv", "mimeType": "text/csv", "buffer": good}])
    pg.click("#load-upload")
    expect(pg.locator("#banner-text")).to_have_text("loaded people.csv: 60 rows")
    expect(pg.locator("#columns tr[data-column='zip']")).to_contain_text("whole numbers 130 to 136")
    shots(pg, "upload-ok")
    # a Parquet upload, and a file given by its path (read where it is); a missing path: one message
    frame = pd.read_csv(io.BytesIO(good))
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    pg.set_input_files("#upload", files=[{"name": "people.parquet", "mimeType": "application/octet-stream",
                                          "buffer": buf.getvalue()}])
    pg.click("#load-upload")
    expect(pg.locator("#banner-text")).to_have_text("loaded people.parquet: 60 rows")
    path = tmp_path / "visits.csv"
    frame.head(25).to_csv(path, index=False)
    pg.fill("#path", str(tmp_path / "missing.csv"))
    pg.click("#load-path")
    expect(pg.locator("#banner-text")).to_contain_text("missing.csv")
    pg.fill("#path", str(path))
    pg.click("#load-path")
    expect(pg.locator("#banner-text")).to_have_text(f"loaded {path}: 25 rows")
    assert studio.proc.poll() is None
    page.assert_clean()


def test_another_origin_or_host_is_refused(studio, page, shots, tmp_path):
    expect = _expect()
    _load(page, studio, "adult")
    own = studio.url.rstrip("/")
    # forged headers, as a script outside a browser could send them
    status, body = studio.request("POST", "/api/load", {"dataset": "synthetic"}, headers={"Origin": "http://evil.example"})
    assert status == 403 and "another origin (http://evil.example)" in body["error"]
    status, body = studio.request("GET", "/api/state", headers={"Host": f"evil.example:{studio.port}", "Origin": None})
    assert status == 403 and "DNS rebinding" in body["error"]
    status, body = studio.request("POST", "/api/load", {"dataset": "synthetic"},
                                  headers={"Origin": None, "Sec-Fetch-Site": "cross-site"})
    assert status == 403
    status, body = studio.request("GET", "/api/state", headers={"Origin": None})
    assert status == 200 and body["data"]["name"] == "adult"

    # a page of another origin (another port of this machine) tries to drive the studio
    evil = tmp_path / "evil"
    evil.mkdir()
    # (a "simple" request: no preflight; its answer is hidden from the page either way, and the
    # studio's Cross-Origin-Resource-Policy makes the fetch fail: what counts is that nothing happened)
    (evil / "index.html").write_text(f"""<!DOCTYPE html><html><body><script>
    fetch("{own}/api/load", {{method: "POST", mode: "no-cors", headers: {{"content-type": "text/plain"}},
          body: JSON.stringify({{dataset: "synthetic"}})}}).then(() => {{ document.title = "answered"; }},
          () => {{ document.title = "answered"; }});
    fetch("{own}/api/state").then(r => r.json()).then(() => {{ document.body.dataset.read = "read"; }},
          () => {{ document.body.dataset.read = "blocked"; }});
    </script></body></html>""")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(evil))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        pg = page.page
        pg.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        expect(pg).to_have_title("answered")
        expect(pg.locator("body")).to_have_attribute("data-read", "blocked")
    finally:
        server.shutdown()
        server.server_close()
    status, body = studio.request("GET", "/api/state")
    assert body["data"]["name"] == "adult"  # the foreign page changed nothing
    pg.goto(studio.url)
    expect(pg.locator("#status")).to_contain_text("adult — ")
    shots(pg, "after-foreign-page")
    # the control: the same request without a foreign Origin (as a local script may send it) acts
    status, body = studio.request("POST", "/api/load", raw=json.dumps({"dataset": "synthetic"}).encode(),
                                  headers={"Origin": None, "Content-Type": "text/plain"})
    assert status == 200 and body["data"]["name"] == "synthetic"


def _publishable_run(studio):
    """A finished run whose release passes (made through the API when there is none)."""
    runs = studio.request("GET", "/api/runs")[1]["runs"]
    done = [r for r in runs if r["status"] == "done" and r["summary"]["publishable"]]
    if done:
        return done[-1]["id"]
    studio.request("POST", "/api/load", {"dataset": "adult"})
    status, made = studio.request("POST", "/api/runs", {"models": "l=3", "algorithms": ["generalized-anatomy"]})
    assert status == 200, made
    rid = made["runs"][0]["id"]
    assert studio.wait_runs([rid])[rid]["status"] == "done"
    return rid


def test_nothing_is_written_outside_the_output_folder(studio, page, shots):
    expect = _expect()
    rid = _publishable_run(studio)
    work, out = studio.work, studio.out
    out.mkdir(exist_ok=True)
    outside = work / "outside.csv"
    (out / "link.csv").symlink_to(outside)  # a link in the folder that leads out of it
    (out / "side.csv.json").symlink_to(work / "outside.json")
    before = sorted(p.name for p in work.iterdir())
    pg = page.page
    pg.goto(studio.url)
    pg.click("#steps button[data-step=publish]")
    pg.select_option("#publish-run", str(rid))
    names = ["../escape.csv", "../../escape.csv", "sub/release.csv", str(work / "abs.csv"), "..\\escape.csv",
             ".hidden.csv", "..", "link.csv", "side.csv", "release.csv/..", "%2e%2e%2fescape.csv"]
    for name in names:
        pg.fill("#publish-name", name)
        pg.click("#publish-button")
        expect(pg.locator("#banner-text")).to_contain_text("refused")
        expect(pg.locator("#banner-text")).to_contain_text("output folder")
        if name == "../escape.csv":
            shots(pg, "path-refused")
    for name in names:  # the same through the API, with anonymize's other switches on
        status, body = studio.request("POST", "/api/publish", {"run": rid, "name": name, "force": True})
        assert status == 400 and "refused" in body["error"], (name, body)
    assert sorted(p.name for p in work.iterdir()) == before
    assert not outside.exists() and not (work / "outside.json").exists() and not (work / "abs.csv").exists()
    assert not any(p.name.startswith(("escape", "release", "sub", ".hidden")) for p in out.rglob("*"))
    page.assert_clean()


def test_a_long_run_is_cancelled(studio, page, shots):
    expect = _expect()
    _load(page, studio, "adult")  # its 7 QIs: the minimality adversary of full-domain search takes minutes
    pg = page.page
    pg.click("#steps button[data-step=apply]")
    pg.fill("#models", "l=3")
    pg.uncheck("input.algo[value='generalized-anatomy']")
    pg.check("input.algo[value='full-domain-search']")
    pg.check("input.algo[value='mondrian']")
    before = set(_run_ids(studio))
    pg.click("#run-button")
    expect(pg.locator("#runs tr[data-status=queued]")).to_have_count(1)
    new = sorted(set(_run_ids(studio)) - before)
    long_run, queued = new
    row = pg.locator(f"#runs tr[data-run='{long_run}']")
    expect(row.locator(".status")).to_contain_text("certifying", timeout=60_000)
    workers = [p for p in studio.children() if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
    assert len(workers) == 1, workers
    shots(pg, "long-run")
    # the queued run leaves the queue; the running one's process ends at once
    pg.click(f"#runs tr[data-run='{queued}'] button.cancel")
    expect(pg.locator(f"#runs tr[data-run='{queued}']")).to_have_attribute("data-status", "cancelled")
    t0 = time.time()
    row.locator("button.cancel").click()
    expect(row).to_have_attribute("data-status", "cancelled", timeout=15_000)
    assert time.time() - t0 < 15
    deadline = time.time() + 10
    while Path(f"/proc/{workers[0]}").exists() and time.time() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{workers[0]}").exists(), "the cancelled run's process still runs"
    runs = {r["id"]: r for r in studio.request("GET", "/api/runs")[1]["runs"]}
    assert runs[long_run]["status"] == "cancelled" and runs[long_run]["summary"] is None
    assert runs[queued]["status"] == "cancelled" and not runs[queued]["steps"]  # never started
    status, _ = studio.request("GET", "/api/state")
    assert status == 200
    shots(pg, "cancelled")
    page.assert_clean()
