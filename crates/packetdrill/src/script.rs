//! The script language: the subset of packetdrill's that the FreeBSD TCP test suite and
//! our Linux-profile scripts use (header options, `#ifdef`, packet lines, system calls,
//! backquoted shell lines, with or without a time, and `%{ assert tcpi_... }%` blocks of
//! TCP_INFO assertions on one line or several, google/packetdrill's form), parsed into
//! [`Script`]. Every error names the file and line (and, for an assertion, the field);
//! nothing here panics on any input.

use std::fmt;

/// A parse error: where, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The script's name as given to [`Script::parse`].
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// What was wrong, and what was expected.
    pub message: String,
    /// The line's text.
    pub text: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}\n  {}",
            self.file,
            self.line,
            self.message,
            self.text.trim()
        )
    }
}

impl std::error::Error for ParseError {}

/// A parsed script.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    /// The name given to [`Script::parse`] (used in messages).
    pub name: String,
    /// `--tolerance_usecs=N` of the header (packetdrill's default, 4000, without one).
    pub tolerance_usecs: u64,
    /// The events in order.
    pub events: Vec<Event>,
}

/// One event line.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// 1-based line number in the file.
    pub line: usize,
    /// The line as written (comment removed, trimmed).
    pub text: String,
    /// When it happens.
    pub time: EventTime,
    /// What happens.
    pub action: Action,
}

/// The time column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventTime {
    /// `1.00`: microseconds from the start of the script.
    Absolute(u64),
    /// `+0.10`: microseconds after the previous event.
    Relative(u64),
}

/// What an event does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A packet to inject (`<`) or to expect (`>`).
    Packet(PacketSpec),
    /// A system call and its expected result.
    Syscall(Syscall),
    /// A backquoted shell command.
    Shell(String),
    /// `%{ assert tcpi_state == TCPI_... }%`.
    AssertState(String),
    /// A `%{ }%` block of TCP_INFO assertions (Linux scripts'), on one line or several:
    /// `assert tcpi_snd_cwnd == 10`, `assert 2 <= tcpi_unacked <= 4`, ... Each must hold.
    AssertInfo(Vec<InfoAssert>),
}

/// A comparison in an assertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// `a OP b` read from the other side: `b OP' a`.
    fn flip(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            o => o,
        }
    }

    /// Whether `a OP b` holds.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// One `assert` of a `%{ }%` block, as checks of one TCP_INFO field: `assert 2 <= tcpi_unacked
/// <= 4` is `tcpi_unacked >= 2` and `tcpi_unacked <= 4`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfoAssert {
    /// The field, one of [`TCPI_FIELDS`] (`tcpi_snd_cwnd`).
    pub field: String,
    /// `(op, value)`: the field `op` the value must hold for each. `tcpi_state` compares
    /// with a `TCPI_<STATE>` name ([`InfoValue::Symbol`], `==` or `!=` only); the others
    /// with numbers (`TCP_CA_Open` ... `TCP_CA_Loss` are read as 0 ... 4).
    pub checks: Vec<(CmpOp, InfoValue)>,
    /// The assertion as written, for messages.
    pub text: String,
}

/// The value side of an assertion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InfoValue {
    /// A number (or a `TCP_CA_*` name, read as its number).
    Int(i64),
    /// A state name such as `TCPI_ESTABLISHED`.
    Symbol(String),
}

/// The TCP_INFO fields the interpreter can give, from the engine's
/// [`Stats`](ackclock_tcp::Stats) (see `run.rs` for how each is derived).
pub const TCPI_FIELDS: &[&str] = &[
    "tcpi_state",
    "tcpi_ca_state",
    "tcpi_snd_cwnd",
    "tcpi_snd_ssthresh",
    "tcpi_retransmits",
    "tcpi_backoff",
    "tcpi_total_retrans",
    "tcpi_unacked",
    "tcpi_reordering",
    "tcpi_snd_mss",
    "tcpi_rtt",
    "tcpi_rttvar",
    "tcpi_rto",
    "tcpi_min_rtt",
    "tcpi_snd_wscale",
    "tcpi_rcv_wscale",
];

/// Linux TCP_INFO fields the engine cannot give, with the reason (a parse error names it).
const TCPI_UNAVAILABLE: &[(&str, &str)] = &[
    (
        "tcpi_lost",
        "the engine does not expose its SACK scoreboard (segments marked lost)",
    ),
    (
        "tcpi_sacked",
        "the engine does not expose its SACK scoreboard (segments SACKed)",
    ),
    (
        "tcpi_retrans",
        "the engine does not count retransmissions still in flight",
    ),
    (
        "tcpi_fackets",
        "FACK is not modelled (and is gone from Linux)",
    ),
];

/// The direction of a packet line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `<`: from the remote peer (the interpreter) to the engine.
    Inbound,
    /// `>`: from the engine, to be matched.
    Outbound,
}

/// TCP flag bits as packetdrill writes them.
pub mod flag {
    /// `F`
    pub const FIN: u8 = 0x01;
    /// `S`
    pub const SYN: u8 = 0x02;
    /// `R`
    pub const RST: u8 = 0x04;
    /// `P`
    pub const PSH: u8 = 0x08;
    /// `.`
    pub const ACK: u8 = 0x10;
    /// `U`
    pub const URG: u8 = 0x20;
    /// `E`
    pub const ECE: u8 = 0x40;
    /// `W`
    pub const CWR: u8 = 0x80;
}

/// Writes flag bits the way packetdrill does (`S.`, `F.`, `R`, `.`).
pub fn flags_text(flags: u8) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (flag::SYN, 'S'),
        (flag::FIN, 'F'),
        (flag::RST, 'R'),
        (flag::PSH, 'P'),
        (flag::URG, 'U'),
        (flag::ECE, 'E'),
        (flag::CWR, 'W'),
        (flag::ACK, '.'),
    ] {
        if flags & bit != 0 {
            s.push(c);
        }
    }
    s
}

/// A packet line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketSpec {
    /// `<` (injected into the engine) or `>` (expected from it).
    pub direction: Direction,
    /// The flags column as [`flag`] bits (`S.` is `SYN | ACK`).
    pub flags: u8,
    /// `START` of `START:END(LEN)`, in script sequence space.
    pub seq: u32,
    /// `LEN`: payload bytes (SYN and FIN not counted).
    pub len: u32,
    /// `ack N`, if written.
    pub ack: Option<u32>,
    /// `win N`, if written (the raw 16-bit field).
    pub win: Option<u16>,
    /// `<...>`, if written; `None` means "no options" on an outbound line.
    pub options: Option<Vec<OptSpec>>,
}

/// One TCP option as written in `<...>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptSpec {
    /// `mss N`: the maximum segment size option (kind 2, RFC 9293 §3.7.1), in bytes.
    Mss(u16),
    /// `nop`: one byte of padding (kind 1).
    Nop,
    /// `eol`: end of option list (kind 0). FreeBSD pads its options with EOL bytes, and
    /// each one is compared as an option, as packetdrill does.
    Eol,
    /// `wscale N`: the window scale option (kind 3, RFC 7323 §2), the shift count.
    WindowScale(u8),
    /// `sackOK`: SACK permitted (kind 4, RFC 2018), in a SYN.
    SackPermitted,
    /// `TS val V ecr E`: the timestamps option (kind 8, RFC 7323 §3).
    Timestamps {
        /// TSval. Sent as written on an inbound line; on an outbound line not compared
        /// (it is the engine's clock), but the first one fixes the offset between the
        /// script's clock and the engine's.
        val: u32,
        /// TSecr. On an inbound line, a nonzero value is one of the engine's TSvals in the
        /// script's clock, and is sent shifted by that offset; on an outbound line it must
        /// equal what the engine echoes (the scripted peer's TSval, literal).
        ecr: u32,
    },
    /// `sack L:R L:R ...`, in script sequence space.
    Sack(Vec<(u32, u32)>),
}

impl fmt::Display for OptSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptSpec::Mss(m) => write!(f, "mss {m}"),
            OptSpec::Nop => write!(f, "nop"),
            OptSpec::Eol => write!(f, "eol"),
            OptSpec::WindowScale(s) => write!(f, "wscale {s}"),
            OptSpec::SackPermitted => write!(f, "sackOK"),
            OptSpec::Timestamps { val, ecr } => write!(f, "TS val {val} ecr {ecr}"),
            OptSpec::Sack(blocks) => {
                write!(f, "sack")?;
                for (l, r) in blocks {
                    write!(f, " {l}:{r}")?;
                }
                Ok(())
            }
        }
    }
}

/// Writes an option list as `<a,b,c>`.
pub fn options_text(opts: &[OptSpec]) -> String {
    let parts: Vec<String> = opts.iter().map(|o| o.to_string()).collect();
    format!("<{}>", parts.join(","))
}

/// A system call line: `name(args) = result [ERRNO] [(comment)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Syscall {
    /// The call's name (`socket`, `accept`, `getsockopt`, ...). The parser takes any name;
    /// [`run`](crate::run) fails on those it does not support.
    pub name: String,
    /// The arguments between the parentheses, in order.
    pub args: Vec<Arg>,
    /// The expected return value.
    pub result: i64,
    /// The expected errno when the result is -1.
    pub errno: Option<String>,
}

/// A system call argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// `...`: anything.
    Ellipsis,
    /// A number.
    Int(i64),
    /// Symbols or'ed together: `O_RDWR | O_NONBLOCK`, or one symbol such as `SOL_SOCKET`.
    Symbols(Vec<String>),
    /// `[x]`: an expected value the call writes back (getsockopt) or passes (setsockopt).
    List(Vec<Arg>),
}

impl Arg {
    /// The integer, if the argument is one.
    pub fn int(&self) -> Option<i64> {
        match self {
            Arg::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The single symbol, if the argument is one.
    pub fn symbol(&self) -> Option<&str> {
        match self {
            Arg::Symbols(s) if s.len() == 1 => Some(&s[0]),
            _ => None,
        }
    }
}

/// packetdrill's tolerance when a script states none.
pub const DEFAULT_TOLERANCE_USECS: u64 = 4000;

/// A header option line (`--name=value`, without the dashes): `Some(tolerance)` for
/// `--tolerance_usecs`, `None` for an accepted option that changes nothing here.
fn header_option(opt: &str) -> Result<Option<u64>, String> {
    let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
    match k {
        "ip_version" if v == "ipv4" => Ok(None),
        "ip_version" => Err(format!("--ip_version={v} is not supported (only ipv4)")),
        "tolerance_usecs" => v
            .parse()
            .map(Some)
            .map_err(|_| format!("--tolerance_usecs wants microseconds, got {v:?}")),
        _ => Err(format!(
            "unknown header option --{k} (supported: --ip_version=ipv4, --tolerance_usecs=N)"
        )),
    }
}

impl Script {
    /// Parses `text` (named `name` in messages) with the preprocessor symbols `defines`
    /// defined (`#ifdef NAME` ... `#endif`; skipped text need not parse).
    ///
    /// # Errors
    /// The first line that does not parse, with its number and what was expected.
    pub fn parse(name: &str, text: &str, defines: &[&str]) -> Result<Script, ParseError> {
        let mut tolerance_usecs = DEFAULT_TOLERANCE_USECS;
        let mut events = Vec::new();
        let mut skipping: Option<usize> = None;
        let mut in_block: Option<usize> = None;
        let mut seen_event = false;
        // A `%{` block open over several lines: its first line's number and the text so far.
        let mut block: Option<(usize, String)> = None;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            if let Some((start, acc)) = block.as_mut() {
                acc.push('\n');
                acc.push_str(raw);
                if raw.contains("}%") {
                    let (start, acc) = (*start, std::mem::take(acc));
                    block = None;
                    let first = acc.lines().next().unwrap_or("").to_string();
                    let event = parse_event(acc.trim()).map_err(|message| ParseError {
                        file: name.to_string(),
                        line: start,
                        message,
                        text: first,
                    })?;
                    seen_event = true;
                    events.push(Event {
                        line: start,
                        text: acc.split_whitespace().collect::<Vec<_>>().join(" "),
                        time: event.0,
                        action: event.1,
                    });
                }
                continue;
            }
            let err = |message: String| ParseError {
                file: name.to_string(),
                line: line_no,
                message,
                text: raw.to_string(),
            };
            let trimmed = raw.trim();
            if let Some(sym) = trimmed.strip_prefix("#ifdef") {
                if in_block.is_some() {
                    return Err(err("nested #ifdef (not supported)".into()));
                }
                let sym = sym.trim();
                if sym.is_empty() || sym.contains(char::is_whitespace) {
                    return Err(err("#ifdef needs one symbol".into()));
                }
                in_block = Some(line_no);
                if !defines.contains(&sym) {
                    skipping = Some(line_no);
                }
                continue;
            }
            if trimmed == "#endif" {
                if in_block.take().is_none() {
                    return Err(err("#endif without #ifdef".into()));
                }
                skipping = None;
                continue;
            }
            if trimmed.starts_with('#') {
                return Err(err(format!(
                    "unknown preprocessor directive {:?} (only #ifdef NAME and #endif)",
                    trimmed.split_whitespace().next().unwrap_or("")
                )));
            }
            if skipping.is_some() {
                continue;
            }
            let body = strip_comment(raw).trim();
            if body.is_empty() {
                continue;
            }
            if let Some(opt) = body.strip_prefix("--") {
                if seen_event {
                    return Err(err("header option after the first event".into()));
                }
                if let Some(t) = header_option(opt).map_err(err)? {
                    tolerance_usecs = t;
                }
                continue;
            }
            // A `%{` whose `}%` is on a later line: the lines up to it are the block.
            if body.contains("%{") && !body.contains("}%") {
                block = Some((line_no, body.to_string()));
                continue;
            }
            // A relative time on the first event means "after time 0", as in packetdrill.
            let event = parse_event(body).map_err(err)?;
            seen_event = true;
            events.push(Event {
                line: line_no,
                text: body.to_string(),
                time: event.0,
                action: event.1,
            });
        }
        let unclosed = |open: usize, message: &str| ParseError {
            file: name.to_string(),
            line: open,
            message: message.into(),
            text: text.lines().nth(open - 1).unwrap_or("").to_string(),
        };
        if let Some((open, _)) = block {
            return Err(unclosed(open, "%{ without closing }%"));
        }
        if let Some(open) = in_block {
            return Err(unclosed(open, "#ifdef without #endif"));
        }
        Ok(Script {
            name: name.to_string(),
            tolerance_usecs,
            events,
        })
    }
}

/// The line without its `//` comment (outside backquotes and `%{ }%`).
fn strip_comment(line: &str) -> &str {
    let mut in_quote = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => in_quote = !in_quote,
            b'/' if !in_quote && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
        i += 1;
    }
    line
}

/// Parses `0.00`, `1.5`, `+0.10` into microseconds.
fn parse_time(tok: &str) -> Result<EventTime, String> {
    let (rel, num) = match tok.strip_prefix('+') {
        Some(n) => (true, n),
        None => (false, tok),
    };
    let bad = || format!("expected a time such as 0.00 or +0.10, got {tok:?}");
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    if !int.chars().all(|c| c.is_ascii_digit()) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    if frac.len() > 6 {
        return Err(format!("{tok:?}: at most 6 decimals (microseconds)"));
    }
    let secs: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    if secs > 1_000_000 {
        return Err(format!(
            "{tok:?}: times above 1,000,000 s are not supported"
        ));
    }
    let mut us: u64 = 0;
    for (k, c) in frac
        .chars()
        .chain(std::iter::repeat('0'))
        .take(6)
        .enumerate()
    {
        let _ = k;
        us = us * 10 + u64::from(c as u8 - b'0');
    }
    let t = secs * 1_000_000 + us;
    Ok(if rel {
        EventTime::Relative(t)
    } else {
        EventTime::Absolute(t)
    })
}

fn parse_event(body: &str) -> Result<(EventTime, Action), String> {
    // google/packetdrill's scripts write `../common/defaults.sh` without a time: at once.
    if let Some(cmd) = body.strip_prefix('`') {
        let cmd = cmd
            .strip_suffix('`')
            .ok_or_else(|| "shell command without closing backquote".to_string())?;
        return Ok((
            EventTime::Relative(0),
            Action::Shell(cmd.trim().to_string()),
        ));
    }
    let (time_tok, rest) = body
        .split_once(char::is_whitespace)
        .ok_or_else(|| "expected `<time> <action>`".to_string())?;
    if time_tok == "*" || time_tok.contains('~') {
        return Err(format!("time form {time_tok:?} is not supported"));
    }
    let time = parse_time(time_tok)?;
    let rest = rest.trim();
    let action = if let Some(p) = rest.strip_prefix('<') {
        Action::Packet(parse_packet(Direction::Inbound, p)?)
    } else if let Some(p) = rest.strip_prefix('>') {
        Action::Packet(parse_packet(Direction::Outbound, p)?)
    } else if let Some(cmd) = rest.strip_prefix('`') {
        let cmd = cmd
            .strip_suffix('`')
            .ok_or_else(|| "shell command without closing backquote".to_string())?;
        Action::Shell(cmd.trim().to_string())
    } else if let Some(code) = rest.strip_prefix("%{") {
        let code = code
            .strip_suffix("}%")
            .ok_or_else(|| "%{ without closing }%".to_string())?;
        parse_assert(code.trim())?
    } else {
        Action::Syscall(parse_syscall(rest)?)
    };
    Ok((time, action))
}

fn parse_assert(code: &str) -> Result<Action, String> {
    let asserts = parse_asserts(code)?;
    // The FreeBSD suite's one form keeps its own action.
    if let [a] = asserts.as_slice() {
        if let (true, [(CmpOp::Eq, InfoValue::Symbol(s))]) =
            (a.field == "tcpi_state", a.checks.as_slice())
        {
            return Ok(Action::AssertState(s.clone()));
        }
    }
    Ok(Action::AssertInfo(asserts))
}

/// The statements of a `%{ }%` block: `assert EXPR [, message]`, separated by newlines or
/// `;`. `#` starts a comment (Python's), a trailing `\` continues a line.
fn parse_asserts(code: &str) -> Result<Vec<InfoAssert>, String> {
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split('#').next().unwrap_or("");
        for stmt in line.split(';') {
            let stmt = stmt.trim().trim_end_matches('\\').trim();
            if stmt.is_empty() {
                continue;
            }
            out.push(parse_one_assert(stmt)?);
        }
    }
    if out.is_empty() {
        return Err("empty %{ }% block (expected `assert tcpi_... == N`)".into());
    }
    Ok(out)
}

fn parse_one_assert(stmt: &str) -> Result<InfoAssert, String> {
    let unsupported = || {
        format!(
            "unsupported code {stmt:?}: only `assert` statements comparing one tcpi_ field \
             with numbers or names (`assert tcpi_snd_cwnd == 10`, `assert 2 <= tcpi_unacked \
             <= 4`, `assert tcpi_state == TCPI_ESTABLISHED`) are supported"
        )
    };
    let rest = stmt
        .strip_prefix("assert")
        .filter(|r| r.starts_with(char::is_whitespace))
        .ok_or_else(unsupported)?
        .trim();
    // `, message` after the expression is Python's assertion message.
    let expr = rest.split(',').next().unwrap_or("").trim();
    // Operands and operators, in order.
    let mut operands = Vec::new();
    let mut ops = Vec::new();
    let mut cur = expr;
    loop {
        let next = ["==", "!=", "<=", ">=", "<", ">"]
            .iter()
            .filter_map(|op| cur.find(op).map(|i| (i, *op)))
            .min_by_key(|(i, op)| (*i, usize::MAX - op.len()));
        match next {
            Some((i, op)) => {
                operands.push(cur[..i].trim());
                ops.push(match op {
                    "==" => CmpOp::Eq,
                    "!=" => CmpOp::Ne,
                    "<=" => CmpOp::Le,
                    ">=" => CmpOp::Ge,
                    "<" => CmpOp::Lt,
                    _ => CmpOp::Gt,
                });
                cur = &cur[i + op.len()..];
            }
            None => {
                operands.push(cur.trim());
                break;
            }
        }
    }
    if ops.is_empty() || ops.len() > 2 || operands.iter().any(|o| o.is_empty()) {
        return Err(unsupported());
    }
    let fields: Vec<usize> = (0..operands.len())
        .filter(|&i| operands[i].starts_with("tcpi_"))
        .collect();
    let [fi] = fields.as_slice() else {
        return Err(unsupported());
    };
    let field = operands[*fi];
    if let Some((_, why)) = TCPI_UNAVAILABLE.iter().find(|(n, _)| *n == field) {
        return Err(format!("field {field} is not supported: {why}"));
    }
    if !TCPI_FIELDS.contains(&field) {
        return Err(format!(
            "unknown field {field} (supported: {})",
            TCPI_FIELDS.join(", ")
        ));
    }
    let mut checks = Vec::new();
    for (k, op) in ops.iter().enumerate() {
        // Operands k and k+1; one of them is the field.
        let (op, value) = if k == *fi {
            (*op, operands[k + 1])
        } else if k + 1 == *fi {
            (op.flip(), operands[k])
        } else {
            return Err(unsupported());
        };
        checks.push((op, parse_info_value(field, op, value)?));
    }
    Ok(InfoAssert {
        field: field.to_string(),
        checks,
        text: expr.to_string(),
    })
}

fn parse_info_value(field: &str, op: CmpOp, v: &str) -> Result<InfoValue, String> {
    if field == "tcpi_state" {
        let ok = v.starts_with("TCPI_")
            && v[5..]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !ok || !matches!(op, CmpOp::Eq | CmpOp::Ne) {
            return Err(format!(
                "field tcpi_state: expected `== TCPI_<STATE>` or `!= TCPI_<STATE>`, got {} {v:?}",
                op.text()
            ));
        }
        return Ok(InfoValue::Symbol(v.to_string()));
    }
    let ca = [
        "TCP_CA_Open",
        "TCP_CA_Disorder",
        "TCP_CA_CWR",
        "TCP_CA_Recovery",
        "TCP_CA_Loss",
    ];
    if let Some(n) = ca.iter().position(|c| *c == v) {
        return Ok(InfoValue::Int(n as i64));
    }
    parse_int(v)
        .map(InfoValue::Int)
        .ok_or_else(|| format!("field {field}: expected a number or TCP_CA_<STATE>, got {v:?}"))
}

fn parse_u32(tok: &str, what: &str) -> Result<u32, String> {
    tok.parse()
        .map_err(|_| format!("{what}: expected a number up to 4294967295, got {tok:?}"))
}

fn parse_packet(direction: Direction, text: &str) -> Result<PacketSpec, String> {
    // Options are the `<...>` at the end, if any.
    let (main, options) = match text.find('<') {
        Some(i) => {
            let opt = text[i + 1..]
                .trim_end()
                .strip_suffix('>')
                .ok_or_else(|| "options `<...` without closing `>`".to_string())?;
            (&text[..i], Some(parse_options(opt)?))
        }
        None => (text, None),
    };
    let mut toks = main.split_whitespace();
    let flags_tok = toks
        .next()
        .ok_or_else(|| "expected flags (S, S., ., F., R, ...)".to_string())?;
    let mut flags = 0u8;
    for c in flags_tok.chars() {
        let bit = match c {
            'S' => flag::SYN,
            'F' => flag::FIN,
            'R' => flag::RST,
            'P' => flag::PSH,
            '.' => flag::ACK,
            'U' => flag::URG,
            'E' => flag::ECE,
            'W' => flag::CWR,
            _ => {
                return Err(format!(
                    "unknown flag {c:?} in {flags_tok:?} (flags are S F R P . U E W)"
                ))
            }
        };
        if flags & bit != 0 {
            return Err(format!("flag {c:?} twice in {flags_tok:?}"));
        }
        flags |= bit;
    }
    let seq_tok = toks
        .next()
        .ok_or_else(|| "expected START:END(LEN) after the flags".to_string())?;
    let (seq, len) = parse_seq(seq_tok)?;
    let mut ack = None;
    let mut win = None;
    while let Some(t) = toks.next() {
        match t {
            "ack" => {
                let v = toks.next().ok_or("`ack` without a number")?;
                ack = Some(parse_u32(v, "ack")?);
            }
            "win" => {
                let v = toks.next().ok_or("`win` without a number")?;
                win = Some(
                    v.parse::<u16>()
                        .map_err(|_| format!("win: expected 0 to 65535, got {v:?}"))?,
                );
            }
            "urg" => return Err("`urg` is not supported".into()),
            other => {
                return Err(format!(
                    "unexpected {other:?} in a packet line (expected `ack N`, `win N` or \
                     `<options>`)"
                ))
            }
        }
    }
    Ok(PacketSpec {
        direction,
        flags,
        seq,
        len,
        ack,
        win,
        options,
    })
}

fn parse_seq(tok: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected START:END(LEN), got {tok:?}");
    let (start, rest) = tok.split_once(':').ok_or_else(bad)?;
    let (end, len) = rest.split_once('(').ok_or_else(bad)?;
    let len = len.strip_suffix(')').ok_or_else(bad)?;
    let start = parse_u32(start, "START")?;
    let end = parse_u32(end, "END")?;
    let len = parse_u32(len, "LEN")?;
    if end != start.wrapping_add(len) {
        return Err(format!(
            "{tok:?}: END must be START + LEN ({})",
            start.wrapping_add(len)
        ));
    }
    // An IPv4 datagram holds at most 65535 bytes, 60 of them headers at most.
    if len > 65475 {
        return Err(format!(
            "{tok:?}: LEN above 65475 does not fit in an IPv4 datagram"
        ));
    }
    Ok((start, len))
}

fn parse_options(text: &str) -> Result<Vec<OptSpec>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let toks: Vec<&str> = part.split_whitespace().collect();
        let opt = match toks.as_slice() {
            ["nop"] => OptSpec::Nop,
            ["eol"] => OptSpec::Eol,
            ["sackOK"] => OptSpec::SackPermitted,
            ["mss", v] => OptSpec::Mss(
                v.parse()
                    .map_err(|_| format!("mss: expected 0 to 65535, got {v:?}"))?,
            ),
            ["wscale", v] => {
                let s: u8 = v
                    .parse()
                    .map_err(|_| format!("wscale: expected 0 to 255, got {v:?}"))?;
                OptSpec::WindowScale(s)
            }
            ["TS", "val", v, "ecr", e] => OptSpec::Timestamps {
                val: parse_u32(v, "TS val")?,
                ecr: parse_u32(e, "TS ecr")?,
            },
            ["sack", blocks @ ..] if !blocks.is_empty() => {
                let mut bs = Vec::new();
                for b in blocks {
                    let (l, r) = b
                        .split_once(':')
                        .ok_or_else(|| format!("sack block: expected L:R, got {b:?}"))?;
                    bs.push((parse_u32(l, "sack left")?, parse_u32(r, "sack right")?));
                }
                if bs.len() > 4 {
                    return Err("more than 4 SACK blocks do not fit in 40 bytes".into());
                }
                OptSpec::Sack(bs)
            }
            _ => {
                return Err(format!(
                    "unknown option {:?} (supported: mss N, nop, eol, wscale N, sackOK, \
                     TS val N ecr N, sack L:R ...)",
                    part.trim()
                ))
            }
        };
        out.push(opt);
    }
    Ok(out)
}

/// Splits at commas that are not inside `[...]` or `(...)`.
fn split_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_int(tok: &str) -> Option<i64> {
    let (neg, t) = match tok.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, tok),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
        t.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

fn parse_arg(tok: &str) -> Result<Arg, String> {
    let t = tok.trim();
    if t == "..." {
        return Ok(Arg::Ellipsis);
    }
    if let Some(inner) = t.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| format!("argument {t:?}: `[` without `]`"))?;
        let items = if inner.trim().is_empty() {
            Vec::new()
        } else {
            split_args(inner)
                .into_iter()
                .map(parse_arg)
                .collect::<Result<_, _>>()?
        };
        return Ok(Arg::List(items));
    }
    if let Some(v) = parse_int(t) {
        return Ok(Arg::Int(v));
    }
    let syms: Vec<String> = t.split('|').map(|s| s.trim().to_string()).collect();
    if syms
        .iter()
        .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Ok(Arg::Symbols(syms));
    }
    Err(format!(
        "argument {t:?} is not a number, a symbol, [..] or ..."
    ))
}

fn parse_syscall(text: &str) -> Result<Syscall, String> {
    let open = text.find('(').ok_or_else(|| {
        format!("expected a packet (< or >), a system call, `shell` or %{{ }}%, got {text:?}")
    })?;
    let name = text[..open].trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("{name:?} is not a system call name"));
    }
    // The argument list ends at the matching parenthesis.
    let mut depth = 0i32;
    let mut close = None;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close.ok_or_else(|| format!("{name}(: no closing parenthesis"))?;
    let inner = &text[open + 1..close];
    let args = if inner.trim().is_empty() {
        Vec::new()
    } else {
        split_args(inner)
            .into_iter()
            .map(parse_arg)
            .collect::<Result<_, _>>()?
    };
    let rest = text[close + 1..].trim();
    let rest = rest
        .strip_prefix('=')
        .ok_or_else(|| format!("{name}(...): expected `= RESULT` after the call"))?
        .trim();
    let mut toks = rest.splitn(2, char::is_whitespace);
    let value = toks.next().unwrap_or("");
    let result = parse_int(value)
        .ok_or_else(|| format!("{name}(...): expected a number after `=`, got {value:?}"))?;
    let after = toks.next().unwrap_or("").trim();
    let mut errno = None;
    let mut tail = after;
    if !after.is_empty() && !after.starts_with('(') {
        let (e, t) = after.split_once(char::is_whitespace).unwrap_or((after, ""));
        if !e
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        {
            return Err(format!(
                "{name}(...): expected an errno such as EINPROGRESS, got {e:?}"
            ));
        }
        errno = Some(e.to_string());
        tail = t.trim();
    }
    if !(tail.is_empty() || tail.starts_with('(') && tail.ends_with(')')) {
        return Err(format!(
            "{name}(...): unexpected {tail:?} after the result (a comment goes in parentheses)"
        ));
    }
    if errno.is_some() && result != -1 {
        return Err(format!("{name}(...): an errno goes with the result -1"));
    }
    Ok(Syscall {
        name: name.to_string(),
        args,
        result,
        errno,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Result<Event, ParseError> {
        Script::parse("t.pkt", line, &[]).map(|s| s.events[0].clone())
    }

    #[test]
    fn times_are_microseconds_absolute_or_relative() {
        assert_eq!(parse_time("0.00"), Ok(EventTime::Absolute(0)));
        assert_eq!(parse_time("+0.10"), Ok(EventTime::Relative(100_000)));
        assert_eq!(parse_time("2.000001"), Ok(EventTime::Absolute(2_000_001)));
        assert_eq!(parse_time("+1"), Ok(EventTime::Relative(1_000_000)));
        assert!(parse_time("+0.1234567").is_err());
        assert!(parse_time("abc").is_err());
        assert!(parse_time("+").is_err());
    }

    #[test]
    fn packet_line_with_options_and_comment() {
        let e = one("+0.00 < S 0:0(0) win 65535 <mss 1460,sackOK,eol,eol> // SYN").unwrap();
        assert_eq!(e.time, EventTime::Relative(0));
        let Action::Packet(p) = e.action else {
            panic!()
        };
        assert_eq!(p.direction, Direction::Inbound);
        assert_eq!(p.flags, flag::SYN);
        assert_eq!((p.seq, p.len, p.ack, p.win), (0, 0, None, Some(65535)));
        assert_eq!(
            p.options,
            Some(vec![
                OptSpec::Mss(1460),
                OptSpec::SackPermitted,
                OptSpec::Eol,
                OptSpec::Eol
            ])
        );
    }

    #[test]
    fn outbound_sack_and_timestamps() {
        let e = one("+0.00 > . 1:1(0) ack 100 win 65351 <nop,nop,sack 50:100 600:700>").unwrap();
        let Action::Packet(p) = e.action else {
            panic!()
        };
        assert_eq!(p.flags, flag::ACK);
        assert_eq!(p.ack, Some(100));
        assert_eq!(
            p.options.unwrap()[2],
            OptSpec::Sack(vec![(50, 100), (600, 700)])
        );
        let e =
            one("0 > S 0:0(0) win 65535 <mss 1460,nop,wscale 6,sackOK,TS val 100 ecr 0>").unwrap();
        let Action::Packet(p) = e.action else {
            panic!()
        };
        assert_eq!(
            p.options.unwrap()[4],
            OptSpec::Timestamps { val: 100, ecr: 0 }
        );
    }

    #[test]
    fn seq_end_must_match_len() {
        let e = one("+0 < . 1:100(98) ack 1 win 1").unwrap_err();
        assert!(e.message.contains("END must be START + LEN"), "{e}");
        assert_eq!(e.line, 1);
    }

    #[test]
    fn syscalls_with_errno_and_comments() {
        let e =
            one("+0.00 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)").unwrap();
        let Action::Syscall(s) = e.action else {
            panic!()
        };
        assert_eq!(s.name, "connect");
        assert_eq!(s.args, vec![Arg::Int(3), Arg::Ellipsis, Arg::Ellipsis]);
        assert_eq!((s.result, s.errno.as_deref()), (-1, Some("EINPROGRESS")));
        let e = one("+0.00 fcntl(3, F_GETFL) = 0x02 (flags O_RDWR)").unwrap();
        let Action::Syscall(s) = e.action else {
            panic!()
        };
        assert_eq!(s.result, 2);
        let e = one("+0.00 fcntl(3, F_SETFL, O_RDWR | O_NONBLOCK) = 0").unwrap();
        let Action::Syscall(s) = e.action else {
            panic!()
        };
        assert_eq!(
            s.args[2],
            Arg::Symbols(vec!["O_RDWR".into(), "O_NONBLOCK".into()])
        );
        let e = one("+0 getsockopt(3, SOL_SOCKET, SO_ERROR, [ECONNREFUSED], [4]) = 0").unwrap();
        let Action::Syscall(s) = e.action else {
            panic!()
        };
        assert_eq!(
            s.args[3],
            Arg::List(vec![Arg::Symbols(vec!["ECONNREFUSED".into()])])
        );
    }

    #[test]
    fn shell_and_assert() {
        let e = one("+0.00 `sysctl -w net.inet.tcp.sack.enable=1`").unwrap();
        assert_eq!(
            e.action,
            Action::Shell("sysctl -w net.inet.tcp.sack.enable=1".into())
        );
        let e = one("+0.00 %{ assert tcpi_state == TCPI_SYN_SENT }%").unwrap();
        assert_eq!(e.action, Action::AssertState("TCPI_SYN_SENT".into()));
        assert!(one("+0 %{ print(tcpi_rtt) }%").is_err());
    }

    #[test]
    fn tcp_info_asserts_one_line_and_several() {
        let e = one("+0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%").unwrap();
        let Action::AssertInfo(a) = e.action else {
            panic!()
        };
        assert_eq!(a[0].field, "tcpi_snd_cwnd");
        assert_eq!(a[0].checks, vec![(CmpOp::Eq, InfoValue::Int(10))]);
        let text = "0 `x`\n+.01 %{\nassert tcpi_ca_state == TCP_CA_Recovery, tcpi_ca_state\n\
                    assert 2 <= tcpi_unacked <= 4; assert 7 > tcpi_snd_ssthresh\n}%\n+0 `y`\n";
        let s = Script::parse("t.pkt", text, &[]).unwrap();
        assert_eq!(s.events.len(), 3);
        assert_eq!(s.events[1].line, 2);
        assert_eq!(s.events[2].line, 6);
        let Action::AssertInfo(a) = &s.events[1].action else {
            panic!()
        };
        assert_eq!(a[0].checks, vec![(CmpOp::Eq, InfoValue::Int(3))]);
        assert_eq!(
            a[1].checks,
            vec![
                (CmpOp::Ge, InfoValue::Int(2)),
                (CmpOp::Le, InfoValue::Int(4))
            ]
        );
        // `7 > x` is `x < 7`.
        assert_eq!(a[2].checks, vec![(CmpOp::Lt, InfoValue::Int(7))]);
    }

    #[test]
    fn tcp_info_errors_name_line_and_field() {
        let e = Script::parse("l.pkt", "0 `x`\n+0 %{ assert tcpi_lost == 1 }%\n", &[]).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("l.pkt", 2));
        assert!(e.message.contains("tcpi_lost is not supported"), "{e}");
        let e = one("+0 %{ assert tcpi_bogus == 1 }%").unwrap_err();
        assert!(e.message.contains("unknown field tcpi_bogus"), "{e}");
        let e = one("+0 %{ assert tcpi_snd_cwnd == lots }%").unwrap_err();
        assert!(e.message.contains("field tcpi_snd_cwnd"), "{e}");
        let e = one("+0 %{ assert tcpi_state < TCPI_LISTEN }%").unwrap_err();
        assert!(e.message.contains("field tcpi_state"), "{e}");
        let e =
            Script::parse("o.pkt", "0 `x`\n+0 %{\nassert tcpi_snd_cwnd == 1\n", &[]).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("without closing"), "{e}");
        for junk in [
            "+0 %{ assert }%",
            "+0 %{ assert == }%",
            "+0 %{ assert 1 == 2 }%",
            "+0 %{ assert tcpi_snd_cwnd == tcpi_snd_cwnd }%",
            "+0 %{ assert tcpi_snd_cwnd <= <= 3 }%",
            "+0 %{ assert 1 < tcpi_snd_cwnd < 2 < 3 }%",
            "+0 %{ ; ; }%",
            "+0 %{ assert tcpi_snd_cwnd == 99999999999999999999999 }%",
        ] {
            assert!(Script::parse("junk.pkt", junk, &[]).is_err(), "{junk}");
        }
    }

    #[test]
    fn backquoted_line_without_a_time_runs_at_once() {
        let s = Script::parse("t.pkt", "`../common/defaults.sh`\n0 `x`\n", &[]).unwrap();
        assert_eq!(s.events[0].time, EventTime::Relative(0));
        assert_eq!(
            s.events[0].action,
            Action::Shell("../common/defaults.sh".into())
        );
    }

    #[test]
    fn ifdef_skips_undefined_blocks_without_parsing_them() {
        let text = "0 `a`\n#ifdef FreeBSD\n+0 this would not parse\n#endif\n#ifdef STANDARD\n+0 `b`\n#endif\n";
        let s = Script::parse("t.pkt", text, &["STANDARD"]).unwrap();
        assert_eq!(s.events.len(), 2);
        assert_eq!(s.events[1].line, 6);
        let e = Script::parse("t.pkt", "#ifdef A\n0 `a`\n", &[]).unwrap_err();
        assert!(e.message.contains("without #endif"));
        let e = Script::parse("t.pkt", "#endif\n", &[]).unwrap_err();
        assert!(e.message.contains("without #ifdef"));
    }

    #[test]
    fn header_options() {
        let s = Script::parse(
            "t.pkt",
            "--ip_version=ipv4\n--tolerance_usecs=75000\n0 `x`\n",
            &[],
        )
        .unwrap();
        assert_eq!(s.tolerance_usecs, 75000);
        let e = Script::parse("t.pkt", "--ip_version=ipv6\n", &[]).unwrap_err();
        assert!(e.message.contains("only ipv4"));
        let e = Script::parse("t.pkt", "--bogus=1\n", &[]).unwrap_err();
        assert!(e.message.contains("unknown header option"));
    }

    #[test]
    fn errors_name_the_line_and_never_panic_on_garbage() {
        let e = Script::parse("x.pkt", "0 `a`\n\n+0.00 < Q 0:0(0) win 1\n", &[]).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("unknown flag"), "{e}");
        for junk in [
            "0",
            "+0 <",
            "+0 > S",
            "+0 > S 0:0",
            "+0 > S 0:0(0) ack",
            "+0 > S 0:0(0) win x",
            "+0 > S 0:0(0) <mss",
            "+0 f(",
            "+0 f() =",
            "+0 f() = x",
            "+0 f([) = 0",
            "+0 `x",
            "+0 %{ x",
            "+0 > S 0:0(0) <sack 1>",
            "+0 > S 0:0(0) <wscale 300>",
            "\u{0}\u{1}",
            "+0 f(,,,) = 0",
            "+99999999999999 `x`",
            "+0 > . 4294967295:4294967295(0) win 1",
        ] {
            let _ = Script::parse("junk.pkt", junk, &[]);
        }
    }
}
