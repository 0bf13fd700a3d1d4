//! The interactive figures in a real browser: headless Chromium, driven over the DevTools
//! protocol (a websocket client of a hundred lines below, std only), loads a report written
//! by `ackclock repro --quick --only startup,self_protection` and the figures of `ackclock
//! sim` on the 8-flow dumbbell; every figure must render (its canvas drawn, marks in view,
//! coloured pixels on it) with no error in the console; then a time-sequence figure of each is
//! zoomed as a user does, a mouse drag across the plot (and once Alt+wheel), and its x axis's
//! range must become the dragged one, and the small-multiple cwnd figure zoomed in its last
//! panel. Hovering over a point shows its values; a legend entry hides and shows its series.
//!
//! Every wait is a condition polled against a deadline. Chromium runs with a profile
//! directory of its own and is ended by its PID. Skips (prints SKIP) when no Chromium is
//! installed; CI installs it. With `ACKCLOCK_BROWSER_SHOTS=DIR`, screenshots of each zoomed
//! figure, before and after, are written there.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackclock"))
}

/// The first Chromium on the PATH.
fn chromium() -> Option<String> {
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .into_iter()
    .find(|c| {
        Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
    .map(String::from)
}

/// A headless Chromium of our own, killed (by its PID) and its profile removed when dropped.
struct Browser {
    child: Child,
    profile: ackclock_testkit::TempDir,
    port: u16,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = &self.profile;
    }
}

impl Browser {
    fn start(exe: &str) -> Browser {
        let profile = ackclock_testkit::TempDir::new("browser-profile");
        let mut child = Command::new(exe)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--window-size=1200,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium");
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID" on its stderr.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("DevTools listening on ws://").nth(1) {
                    let _ = tx.send(rest.to_string());
                }
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium printed no DevTools address within 30 s");
        let port = line
            .split('/')
            .next()
            .and_then(|hp| hp.rsplit(':').next())
            .and_then(|p| p.parse().ok())
            .expect("DevTools port");
        Browser {
            child,
            profile,
            port,
        }
    }

    /// The DevTools websocket of the browser's page.
    fn page(&self) -> Cdp {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let list = http_get(self.port, "/json/list");
            let ws = serde_json::from_str::<Value>(&list).ok().and_then(|v| {
                v.as_array()?
                    .iter()
                    .find(|t| t["type"] == "page")
                    .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(String::from))
            });
            if let Some(ws) = ws {
                return Cdp::connect(&ws);
            }
            assert!(Instant::now() < deadline, "no page target: {list}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The body of `GET path` from the DevTools HTTP server (HTTP/1.1 only; it refuses 1.0).
fn http_get(port: u16, path: &str) -> String {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    let mut r = Vec::new();
    let mut buf = [0u8; 4096];
    // Until the body's Content-Length is in, or the server closes.
    loop {
        let text = String::from_utf8_lossy(&r).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_string())
                })
                .and_then(|v| v.parse::<usize>().ok());
            if len.is_some_and(|n| body.len() >= n) {
                return body.to_string();
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => {
                return text
                    .split_once("\r\n\r\n")
                    .map(|(_, b)| b.to_string())
                    .unwrap_or_default()
            }
            Ok(n) => r.extend_from_slice(&buf[..n]),
        }
    }
}

/// A DevTools protocol session over one websocket: commands and their answers, and the
/// errors the page reported (exceptions, console errors, log entries of level error).
struct Cdp {
    ws: TcpStream,
    id: u64,
    errors: Vec<String>,
}

impl Cdp {
    fn connect(url: &str) -> Cdp {
        let rest = url.strip_prefix("ws://").expect("ws url");
        let (host, path) = rest.split_once('/').unwrap();
        let mut ws = TcpStream::connect(host).expect("connect to DevTools");
        write!(
            ws,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: YWNrY2xvY2stYnJvd3Nlcg==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            ws.read_exact(&mut b).expect("websocket handshake");
            head.push(b[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        Cdp {
            ws,
            id: 0,
            errors: Vec::new(),
        }
    }

    fn send_text(&mut self, text: &str) {
        let p = text.as_bytes();
        let mut f = vec![0x81u8];
        match p.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n < 65536 => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = [0x5a, 0x17, 0xc3, 0x2e];
        f.extend_from_slice(&mask);
        f.extend(p.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.ws.write_all(&f).expect("websocket write");
    }

    /// The next text message, waiting until `deadline`.
    fn recv_text(&mut self, deadline: Instant) -> String {
        let mut msg = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "DevTools sent nothing before the deadline");
            self.ws.set_read_timeout(Some(left)).unwrap();
            let mut h = [0u8; 2];
            self.ws.read_exact(&mut h).expect("websocket read");
            let mut len = u64::from(h[1] & 0x7f);
            if len == 126 {
                let mut l = [0u8; 2];
                self.ws.read_exact(&mut l).unwrap();
                len = u64::from(u16::from_be_bytes(l));
            } else if len == 127 {
                let mut l = [0u8; 8];
                self.ws.read_exact(&mut l).unwrap();
                len = u64::from_be_bytes(l);
            }
            let mut p = vec![0u8; len as usize];
            self.ws.read_exact(&mut p).unwrap();
            match h[0] & 0x0f {
                0x8 => panic!("DevTools closed the websocket"),
                0x9 | 0xa => continue,
                _ => msg.extend_from_slice(&p),
            }
            if h[0] & 0x80 != 0 {
                return String::from_utf8(msg).expect("utf-8 message");
            }
        }
    }

    /// Sends a command and returns its result; events that come before it are looked at
    /// for errors.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send_text(&json!({"id": id, "method": method, "params": params}).to_string());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let m: Value = serde_json::from_str(&self.recv_text(deadline)).unwrap();
            if m["id"] == id {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
            self.event(&m);
        }
    }

    fn event(&mut self, m: &Value) {
        let p = &m["params"];
        match m["method"].as_str() {
            Some("Runtime.exceptionThrown") => self.errors.push(p["exceptionDetails"].to_string()),
            Some("Runtime.consoleAPICalled") if p["type"] == "error" => {
                self.errors.push(p["args"].to_string())
            }
            Some("Log.entryAdded") if p["entry"]["level"] == "error" => {
                self.errors.push(p["entry"].to_string())
            }
            _ => {}
        }
    }

    /// Evaluates `js` in the page; its value (returned by value).
    fn eval(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{js}: {r}");
        r["result"]["value"].clone()
    }

    /// Polls `js` until it is true, or fails after `secs`.
    fn wait_for(&mut self, js: &str, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while self.eval(js) != json!(true) {
            assert!(Instant::now() < deadline, "not true within {secs} s: {js}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn mouse(&mut self, kind: &str, x: f64, y: f64, buttons: u32, modifiers: u32) {
        self.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": if kind == "mouseMoved" && buttons == 0 { "none" } else { "left" },
                   "buttons": buttons, "clickCount": 1, "modifiers": modifiers}),
        );
    }

    fn shot(&mut self, js_rect: &str, file: Option<PathBuf>) {
        let Some(file) = file else { return };
        let r = self.eval(js_rect);
        let png = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": r["x"], "y": r["y"], "width": r["w"], "height": r["h"], "scale": 1}}),
        );
        std::fs::write(&file, b64_decode(png["data"].as_str().unwrap())).unwrap();
        println!("screenshot: {}", file.display());
    }
}

fn b64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let v: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(val).collect();
    v.chunks(4)
        .flat_map(|c| {
            let n = c
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
            let b = n.to_be_bytes();
            b[1..c.len()].to_vec()
        })
        .collect()
}

/// Opens `page` and checks that every figure rendered: returns how many there are.
fn load_and_check(cdp: &mut Cdp, page: &Path) -> usize {
    cdp.errors.clear();
    cdp.call(
        "Page.navigate",
        json!({"url": format!("file://{}", page.display())}),
    );
    cdp.wait_for(
        "document.readyState === 'complete' && !!window.ackclockPlot && document.querySelectorAll('div.ackfig').length > 0 && document.querySelectorAll('div.ackfig:not([data-rendered])').length === 0",
        30,
    );
    // Per figure: marks in view, and coloured pixels (the axes, grid and text are grey).
    let figs = cdp.eval(
        r"Array.from(document.querySelectorAll('div.ackfig')).map(function (el, i) {
            var c = el.querySelector('canvas.ackfig-main') || el.querySelector('.ackfig-plot canvas');
            var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, coloured = 0;
            for (var k = 0; k < d.length; k += 4) {
              var hi = Math.max(d[k], d[k + 1], d[k + 2]), lo = Math.min(d[k], d[k + 1], d[k + 2]);
              if (hi - lo > 40) coloured++;
            }
            return {i: i, title: el.ackfig ? el.ackfig.spec.title : '', drawn: +el.dataset.drawn,
                    error: el.dataset.error || '', w: c.width, coloured: coloured};
          })",
    );
    let figs = figs.as_array().expect("figures");
    for f in figs {
        assert!(
            f["error"] == "" && f["w"].as_f64() > Some(300.0),
            "{}: {f}",
            page.display()
        );
        assert!(
            f["drawn"].as_f64() > Some(0.0) && f["coloured"].as_f64() > Some(50.0),
            "{}: figure drew nothing: {f}",
            page.display()
        );
    }
    assert!(
        cdp.errors.is_empty(),
        "{}: {:?}",
        page.display(),
        cdp.errors
    );
    figs.len()
}

/// Drags across figure `i` of the page in panel `panel`, from 30% to 60% of the plot's
/// width, and checks the x axis's range became that part of the old one.
fn drag_zoom(cdp: &mut Cdp, i: usize, panel: &str, shots: Option<(PathBuf, PathBuf)>) {
    let fig = format!("window.ackclockPlot.figures[{i}]");
    cdp.eval(&format!(
        "{fig}.el.scrollIntoView({{block: 'center'}}); true"
    ));
    let rect = format!(
        "(function () {{ var r = {fig}.el.getBoundingClientRect(); return {{x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height}}; }})()"
    );
    let (before_shot, after_shot) = shots.map_or((None, None), |(a, b)| (Some(a), Some(b)));
    cdp.shot(&rect, before_shot);
    let geo = cdp.eval(&format!(
        "(function () {{ var f = {fig}, P = f.L.panels[{panel}], r = f.canvas.getBoundingClientRect();
            window.scrollBy(0, r.top + P.y + P.h / 2 - window.innerHeight / 2);
            r = f.canvas.getBoundingClientRect();
            return {{x: r.left + P.x, y: r.top + P.y + P.h / 2, w: P.w, range: f.xRange(), log: f.spec.logX}}; }})()"
    ));
    let (x, y, w) = (
        geo["x"].as_f64().unwrap(),
        geo["y"].as_f64().unwrap(),
        geo["w"].as_f64().unwrap(),
    );
    let r0: Vec<f64> = serde_json::from_value(geo["range"].clone()).unwrap();
    assert_eq!(
        geo["log"],
        json!(false),
        "the drag test wants a linear x axis"
    );
    let (a, b) = (x + 0.3 * w, x + 0.6 * w);
    cdp.mouse("mouseMoved", a, y, 0, 0);
    cdp.mouse("mousePressed", a, y, 1, 0);
    for k in 1..=6 {
        cdp.mouse("mouseMoved", a + (b - a) * f64::from(k) / 6.0, y, 1, 0);
    }
    cdp.mouse("mouseReleased", b, y, 0, 0);
    let r1: Vec<f64> =
        serde_json::from_value(cdp.eval(&format!("{fig}.xRange()"))).expect("x range");
    let span = r0[1] - r0[0];
    let want = [r0[0] + 0.3 * span, r0[0] + 0.6 * span];
    // One pixel of the plot is the drag's resolution.
    let tol = span / w * 1.5;
    assert!(
        (r1[0] - want[0]).abs() <= tol && (r1[1] - want[1]).abs() <= tol,
        "dragged 30%..60% of {r0:?}: got {r1:?}, want {want:?}"
    );
    // The axis as drawn follows (the element's data says what was drawn last), and marks
    // are still in view.
    let drawn = cdp.eval(&format!(
        "[+{fig}.el.dataset.x0, +{fig}.el.dataset.x1, +{fig}.el.dataset.drawn]"
    ));
    assert_eq!(drawn[0].as_f64(), Some(r1[0]));
    assert_eq!(drawn[1].as_f64(), Some(r1[1]));
    assert!(drawn[2].as_f64() > Some(0.0), "nothing in the zoomed view");
    cdp.shot(&rect, after_shot);
    // Alt+wheel zooms in further about the pointer; a double-click shows everything again.
    let mid = x + 0.5 * w;
    cdp.call(
        "Input.dispatchMouseEvent",
        json!({"type": "mouseWheel", "x": mid, "y": y, "deltaX": 0, "deltaY": -100, "modifiers": 1}),
    );
    let r2: Vec<f64> = serde_json::from_value(cdp.eval(&format!("{fig}.xRange()"))).unwrap();
    assert!(
        r2[1] - r2[0] < 0.9 * (r1[1] - r1[0]) && r2[0] >= r1[0] && r2[1] <= r1[1],
        "alt+wheel: {r1:?} -> {r2:?}"
    );
    cdp.call(
        "Input.dispatchMouseEvent",
        json!({"type": "mousePressed", "x": mid, "y": y, "button": "left", "buttons": 1, "clickCount": 2}),
    );
    cdp.call(
        "Input.dispatchMouseEvent",
        json!({"type": "mouseReleased", "x": mid, "y": y, "button": "left", "buttons": 0, "clickCount": 2}),
    );
    let r3: Vec<f64> = serde_json::from_value(cdp.eval(&format!("{fig}.xRange()"))).unwrap();
    assert_eq!(r3, r0, "double-click resets");
    assert!(cdp.errors.is_empty(), "{:?}", cdp.errors);
}

/// Hovers over a drawn point of figure `i` (the middle point of its first series in view)
/// and checks the tooltip names the series and the point's x; then hides that series from
/// the legend (fewer marks drawn) and shows it again (as many as before).
fn hover_and_toggle(cdp: &mut Cdp, i: usize) {
    let fig = format!("window.ackclockPlot.figures[{i}]");
    let at = cdp.eval(&format!(
        "(function () {{ var f = {fig}, P = f.L.panels[0], s = f.spec.panels[0].series.find(function (s) {{ return s.label && s.x.length; }});
            var k = Math.floor(s.x.length / 2), r = f.canvas.getBoundingClientRect();
            window.scrollBy(0, r.top + P.Y(s.y[k]) - window.innerHeight / 2);
            r = f.canvas.getBoundingClientRect();
            return {{x: r.left + P.X(s.x[k]), y: r.top + P.Y(s.y[k]), label: s.label}}; }})()"
    ));
    let (x, y) = (at["x"].as_f64().unwrap(), at["y"].as_f64().unwrap());
    cdp.mouse("mouseMoved", x, y, 0, 0);
    let tip = cdp.eval(&format!(
        "(function () {{ var t = {fig}.tip; return t.style.display === 'block' ? t.textContent : ''; }})()"
    ));
    let tip = tip.as_str().unwrap_or_default().to_string();
    assert!(!tip.is_empty(), "no tooltip at a drawn point: {at}");
    assert!(tip.contains(':'), "{tip}");
    let drawn = |cdp: &mut Cdp| {
        cdp.eval(&format!("+{fig}.el.dataset.drawn"))
            .as_f64()
            .unwrap()
    };
    let before = drawn(cdp);
    let item = format!(
        "Array.from({fig}.el.querySelectorAll('.ackfig-item')).find(function (e) {{ return e.textContent === {}; }})",
        at["label"]
    );
    let click = |cdp: &mut Cdp| {
        let r = cdp.eval(&format!(
            "(function () {{ var e = {item}; e.scrollIntoView({{block: 'center'}}); var r = e.getBoundingClientRect(); return {{x: r.left + r.width / 2, y: r.top + r.height / 2}}; }})()"
        ));
        let (x, y) = (r["x"].as_f64().unwrap(), r["y"].as_f64().unwrap());
        cdp.mouse("mousePressed", x, y, 1, 0);
        cdp.mouse("mouseReleased", x, y, 0, 0);
    };
    click(cdp);
    let hidden = drawn(cdp);
    assert!(
        hidden < before,
        "hiding {} drew {hidden} of {before}",
        at["label"]
    );
    click(cdp);
    assert_eq!(drawn(cdp), before, "showing {} again", at["label"]);
    assert!(cdp.errors.is_empty(), "{:?}", cdp.errors);
}

/// The index of the first figure of the page whose title contains `word`.
fn figure_titled(cdp: &mut Cdp, word: &str) -> usize {
    let i = cdp.eval(&format!(
        "window.ackclockPlot.figures.findIndex(function (f) {{ return f.spec.title.indexOf({}) >= 0; }})",
        json!(word)
    ));
    usize::try_from(i.as_i64().unwrap()).unwrap_or_else(|_| panic!("no figure titled *{word}*"))
}

#[test]
fn report_and_sim_figures_render_and_zoom_in_headless_chromium() {
    let Some(exe) = chromium() else {
        println!("SKIP: no chromium (or chromium-browser, google-chrome) on the PATH");
        return;
    };
    let started = Instant::now();
    let d = ackclock_testkit::TempDir::new("browser");
    let report = d.join("report");
    let o = bin()
        .args([
            "repro",
            "--quick",
            "--only",
            "startup,self_protection",
            "--out",
        ])
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell.toml");
    let sim = d.join("sim");
    let o = bin()
        .arg("sim")
        .arg(&scenario)
        .arg("--out")
        .arg(&sim)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let shots = std::env::var_os("ACKCLOCK_BROWSER_SHOTS").map(PathBuf::from);
    let shot = |name: &str| {
        shots.as_ref().map(|dir| {
            (
                dir.join(format!("{name}-before.png")),
                dir.join(format!("{name}-zoomed.png")),
            )
        })
    };

    let browser = Browser::start(&exe);
    let mut cdp = browser.page();
    cdp.call("Runtime.enable", json!({}));
    cdp.call("Log.enable", json!({}));
    cdp.call("Page.enable", json!({}));

    // The report: every figure (as many as it has SVG files), then the startup time-sequence.
    let svgs = std::fs::read_dir(report.join("startup"))
        .unwrap()
        .chain(std::fs::read_dir(report.join("self_protection")).unwrap())
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    let n = load_and_check(&mut cdp, &report.join("index.html"));
    assert_eq!(n, svgs, "every figure of the report is interactive");
    let i = figure_titled(&mut cdp, "with slow start (Tahoe)");
    drag_zoom(&mut cdp, i, "0", shot("report-tseq"));

    // sim's figures, each a page of its own: a time-sequence diagram and the small multiples
    // of the eight flows' windows (zoomed in the last panel: all panels share the x axis).
    assert_eq!(load_and_check(&mut cdp, &sim.join("tseq-pair1.html")), 1);
    drag_zoom(&mut cdp, 0, "0", shot("sim-tseq"));
    hover_and_toggle(&mut cdp, 0);
    assert_eq!(load_and_check(&mut cdp, &sim.join("cwnd.html")), 1);
    let panels = cdp.eval("window.ackclockPlot.figures[0].spec.panels.length");
    assert_eq!(panels, json!(8), "one panel per flow of the dumbbell");
    drag_zoom(&mut cdp, 0, "7", shot("sim-cwnd"));
    for page in ["throughput.html", "queue.html"] {
        assert_eq!(load_and_check(&mut cdp, &sim.join(page)), 1, "{page}");
    }
    drop(cdp);
    drop(browser);
    println!("browser test: {:.1} s", started.elapsed().as_secs_f64());
}
