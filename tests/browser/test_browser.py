"""End to end in headless Chromium: the dashboard starts on the sample data, shows
the bound, and rejects a broken upload with one clear message.

Needs Debian's chromium at /usr/bin/chromium (installed by run_tests.sh); Playwright
drives it and never downloads a browser of its own.
"""

from __future__ import annotations

import pytest

from browser_support import ROOT, Server, idle, launch, require_chromium

sync_api = require_chromium()
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("store") / "labels.db").start()
    yield srv.url
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    with launch(sync_api) as b:
        yield b


def test_dashboard_shows_bound_on_sample_data(server, browser, tmp_path):
    import certlib

    pool = certlib.load_pool(ROOT / "sample_data" / "demo_binary.csv")
    pre = certlib.prelabel_bound(pool).prelabel_bound
    page = browser.new_page(viewport={"width": 1300, "height": 1600})
    page.goto(server)
    page.get_by_text("minimum certificate").first.wait_for(timeout=60_000)
    page.get_by_text(f"{pre:,} labels").first.wait_for(timeout=30_000)
    page.screenshot(path=str(tmp_path / "home.png"), full_page=True)
    page.close()


def _upload(page, path):
    page.locator("section[data-testid=stSidebar] input[type=file]").first.set_input_files(str(path))


def test_broken_upload_gives_one_clear_message(server, browser, tmp_path):
    bad = tmp_path / "broken.csv"
    bad.write_text("row_id,pred_a,conf_a,pred_b,conf_b\n0,1,0.9,0,0.8\n1,0,nan,1,0.7\n")
    page = browser.new_page(viewport={"width": 1300, "height": 1200})
    page.goto(server)
    page.get_by_text("Add a pool file").first.wait_for(timeout=60_000)
    _upload(page, bad)
    msg = page.get_by_text("Could not load broken.csv").first
    msg.wait_for(timeout=30_000)
    text = msg.inner_text()
    assert "conf_a" in text and "upload.csv" not in text
    assert "the active pool is still" in text
    # in view without scrolling (the sidebar's foot is below the fold), and the refused
    # file is not left in the uploader as if it had loaded
    box = msg.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 1200
    idle(page)
    assert page.locator("section[data-testid=stSidebar] "
                        "[data-testid=stFileChip]").count() == 0
    assert "Traceback" not in page.inner_text("body")
    # the previous pool stays active
    assert page.evaluate("location.href").endswith("pool=sample%3Ademo")
    assert "logreg, tree, naive_bayes, knn" in page.inner_text("body")
    # choosing another pool is moving on: the message goes
    page.locator("section[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    page.get_by_role("option", name="Teaching pool (paper Figure 10 protocol)").click()
    page.wait_for_function("location.href.endsWith('pool=sample%3Ateaching')",
                           timeout=30_000)
    page.wait_for_function("!document.body.innerText.includes('Could not load broken.csv')",
                           timeout=30_000)
    idle(page)
    page.wait_for_timeout(1_000)
    assert "Could not load broken.csv" not in page.inner_text("body")
    page.close()


UPLOAD = ("row_id,label,pred_[pwn](https://example.com/x),conf_[pwn](https://example.com/x),"
          "pred_![img](https://example.com/i.png),conf_![img](https://example.com/i.png)\n"
          + "".join(f"{i},{i % 2},{i % 2},{0.5 + i / 100},{(i // 3) % 2},{0.9 - i / 100}\n"
                    for i in range(30)))


def _no_outside_links(page):
    assert page.locator("a[href*='example.com']").count() == 0
    assert page.locator("img[src*='example.com']").count() == 0


def test_upload_survives_reload_new_tab_and_restart_as_plain_text(browser, tmp_path):
    """An uploaded pool is saved at once: a reload, another tab, another page and a
    server restart open it again; names from the file are shown as typed, never as
    Markdown links or images."""
    f = tmp_path / "my_models.csv"
    f.write_text(UPLOAD)
    srv = Server(tmp_path / "labels.db").start()
    try:
        page = browser.new_page(viewport={"width": 1300, "height": 1200})
        page.goto(srv.url)
        page.get_by_text("Add a pool file").first.wait_for(timeout=60_000)
        _upload(page, f)
        page.wait_for_function("location.href.includes('pool=upload')", timeout=30_000)
        page.get_by_text("rows (n)").first.wait_for(timeout=30_000)
        page.get_by_text("[pwn](https://example.com/x)").first.wait_for(timeout=30_000)
        _no_outside_links(page)
        url = page.evaluate("location.href")
        page.reload()
        page.get_by_text("[pwn](https://example.com/x)").first.wait_for(timeout=60_000)
        other = browser.new_page(viewport={"width": 800, "height": 1000})
        other.goto(url)
        other.get_by_text("[pwn](https://example.com/x)").first.wait_for(timeout=60_000)
        other.close()
        srv.stop()
        srv.start()
        page.goto(url)
        page.get_by_text("[pwn](https://example.com/x)").first.wait_for(timeout=30_000)
        _no_outside_links(page)
        page.get_by_role("link", name="Figure 10").first.click()
        page.get_by_text("One condition, label by label").first.wait_for(timeout=60_000)
        page.get_by_text("[pwn](https://example.com/x)").first.wait_for(timeout=60_000)
        _no_outside_links(page)
        page.get_by_role("link", name="Label").first.click()
        name = page.get_by_label("Your name (annotator)")
        name.wait_for(timeout=60_000)
        name.fill("[me](https://example.com/a)")
        name.press("Enter")
        page.get_by_role("button", name="Start a new project").click()
        page.get_by_text("0 of 30").first.wait_for(timeout=60_000)
        page.get_by_text("row_id ").first.wait_for(timeout=60_000)  # the labelling panel
        page.get_by_text("my_models.csv").first.wait_for(timeout=60_000)
        _no_outside_links(page)
        assert "Traceback" not in page.inner_text("body")
        page.close()
    finally:
        srv.stop()


@pytest.mark.parametrize("path", ["/pool", "/replay", "/Label", "/certificate",
                                  "/Teaching_figure"])
def test_a_page_opened_by_its_address_keeps_the_frame(server, browser, path):
    """A reload or a bookmark opens the page inside app.py's navigation (grouped, titled),
    not as a bare script."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(server + path)
    nav = page.locator("[data-testid=stSidebarNav]")
    nav.wait_for(timeout=60_000)
    page.get_by_text("Model choice").first.wait_for(timeout=60_000)
    assert "Plan and certify" in nav.inner_text()
    page.close()


def test_teach_pages_keep_their_step_over_a_reload(server, browser):
    """Figure 2's labels, read order and step, Figure 1's labels and step and Figure 10's
    policy and cursor live in the address: a reload (or a bookmark) shows the same state."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(server + "/figure2")
    page.get_by_text("After 0 of 4 labels").first.wait_for(timeout=60_000)
    order = page.get_by_label("Read order (rows)", exact=True)
    order.fill("1; 2; 3; 4")  # semicolons separate rows too
    order.press("Enter")
    idle(page)
    for k in range(1, 3):
        page.get_by_role("button", name="Step").click()
        page.get_by_text(f"After {k} of 4 labels").first.wait_for(timeout=60_000)
    idle(page)
    page.reload()
    page.get_by_text("After 2 of 4 labels").first.wait_for(timeout=60_000)
    idle(page)  # the first draw after a reload can show the text before the input's value
    page.wait_for_function(
        "() => [...document.querySelectorAll('input[aria-label=\"Read order (rows)\"]')]"
        ".some(e => e.value === '1; 2; 3; 4')", timeout=30_000)
    page.goto(server + "/figure1?fig1_y1=1&fig1_t=1")
    page.get_by_text("After 1 of 2 labels").first.wait_for(timeout=60_000)
    page.get_by_text("is a tie, which goes to A").first.wait_for(timeout=60_000)
    page.reload()
    page.get_by_text("After 1 of 2 labels").first.wait_for(timeout=60_000)
    page.get_by_text("y = (1, 0) favours B").first.wait_for(timeout=60_000)
    page.goto(server + "/Teaching_figure?fig_policy=adaptive-pair-sum&fig_cursor=5")
    page.get_by_text("adaptive-pair-sum order").first.wait_for(timeout=60_000)
    page.get_by_text("shared, 5 labels").first.wait_for(timeout=60_000)
    assert "Traceback" not in page.inner_text("body")
    page.close()


def test_same_content_under_a_new_name_says_it_is_the_same_pool(browser, tmp_path):
    srv = Server(tmp_path / "labels.db").start()
    try:
        first, second = tmp_path / "mine.csv", tmp_path / "mine_copy.csv"
        first.write_text(UPLOAD)
        second.write_text(UPLOAD)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.goto(srv.url + "/pool")
        page.get_by_text("Add a pool file").first.wait_for(timeout=60_000)
        _upload(page, first)
        page.wait_for_function("location.href.includes('pool=upload')", timeout=30_000)
        idle(page)
        assert "same content" not in page.inner_text("body")
        _upload(page, second)
        page.get_by_text("holds the same content as").first.wait_for(timeout=30_000)
        text = page.get_by_text("holds the same content as").first.inner_text()
        assert "mine_copy.csv" in text and "mine.csv" in text
        page.close()
    finally:
        srv.stop()


def test_no_request_leaves_the_machine(server, browser):
    """Every request the browser makes while the pages draw goes to the dashboard's own
    address: the page icon is drawn by the app (a Material icon name made every page
    fetch it from an outside font host)."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    urls = []
    page.on("request", lambda r: urls.append(r.url))
    host = server.split("//")[1]
    for path in ("/", "/pool", "/Label", "/figure2", "/audit"):
        page.goto(server + path)
        page.get_by_text("Model choice").first.wait_for(timeout=60_000)
        idle(page)
    icons = page.eval_on_selector_all("link[rel*=icon]", "ls => ls.map(l => l.href)")
    assert icons and all(host in u or u.startswith("data:") for u in icons), icons
    outside = sorted({u for u in urls if not u.startswith(("data:", "blob:"))
                      and u.split("/")[2] != host})
    assert urls and outside == []
    page.close()


def test_streamlit_run_without_flags_listens_on_this_machine_only():
    """The shipped .streamlit/config.toml is what `streamlit run app.py` reads: its server
    address is the loopback one (without it Streamlit listens on every interface), a
    visitor sees no traceback, and the tables offer no CSV export of their own (it would
    write formula cells as they are)."""
    import subprocess
    import sys

    shown = subprocess.run([sys.executable, "-m", "streamlit", "config", "show"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120).stdout
    assert '\naddress = "127.0.0.1"\n' in shown
    assert "\ngatherUsageStats = false\n" in shown  # no request to an outside host
    assert '\nshowErrorDetails = "none"\n' in shown
    assert "\ndisableDataExport = true\n" in shown
