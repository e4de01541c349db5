//! `InfiniteSource([DATA, LIMIT, BURST, ACTIVE, STOP, DATASIZE])` and
//! `RatedSource([DATA, RATE, LIMIT, ACTIVE, STOP, DATASIZE])` and `TimedSource([INTERVAL, DATA,
//! LIMIT, STOP, ACTIVE])` — generate copies of one packet (TimedSource: one every INTERVAL
//! seconds, default 0.5 s, packet i stamped i * INTERVAL). Write handlers `active`, `reset`,
//! `limit`.
//!
//! Generators (no inputs, 1 push output; the runtime pulls packets out of them with
//! `Router::run_generators`). DATA is a Click data string (see [`super::data`]; default
//! Click's 64-byte text "Random bullshit in a packet, at least 64 bytes long. Well, now it
//! is."). DATASIZE (alias LENGTH) pads with zeros or truncates the data to that length.
//! LIMIT: packets to emit, -1 (Click's default) for no limit, in which case the run's own
//! packet limit stops it. ACTIVE false: emits nothing. STOP and BURST are accepted (BURST
//! only groups packets per scheduling in Click; every packet is one trace here).
//! Timestamps: InfiniteSource emits as fast as possible, every packet at time 0;
//! RatedSource emits at RATE packets per second (default 10): packet i at i / RATE seconds.
//! Packets carry no IP header annotation (as in Click).
//!
//! Costs: the runtime's source visit (4 instructions, 16 B meta-data write); creating the
//! packet copy is the generator's own work outside any element visit.
use super::data::parse_data;
use crate::conf::{parse_bool, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Role};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const INFINITE: ClassInfo = ClassInfo {
    name: "InfiniteSource",
    summary: "generate copies of a packet (LIMIT of them, or until the run's limit)",
    make: make_infinite,
};
pub const TIMED: ClassInfo = ClassInfo {
    name: "TimedSource",
    summary: "generate copies of a packet every INTERVAL seconds",
    make: make_timed,
};
pub const RATED: ClassInfo = ClassInfo {
    name: "RatedSource",
    summary: "generate copies of a packet at RATE packets per second",
    make: make_rated,
};

/// Click's default packet contents.
pub const DEFAULT_DATA: &str =
    "Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

struct Source {
    data: Vec<u8>,
    limit: Option<u64>,
    /// Inter-packet gap in ns (None: all at time 0), as a rate for exact arithmetic.
    rate: Option<u64>,
    /// TimedSource: gap between packets, ns (packet i at i * INTERVAL).
    interval_ns: Option<u64>,
    active: bool,
    count: u64,
}

fn parse_limit(s: &str) -> Result<Option<u64>, String> {
    let s = s.trim();
    if s == "-1" {
        return Ok(None);
    }
    parse_uint(s)
        .map(Some)
        .map_err(|_| format!("LIMIT: expected a packet count or -1, found '{s}'"))
}

fn common(class: &str, config: &str, rated: bool) -> Result<Source, String> {
    let mut a = Args::parse(
        class,
        config,
        &[
            "DATA",
            "RATE",
            "LIMIT",
            "BURST",
            "ACTIVE",
            "STOP",
            "DATASIZE",
            "LENGTH",
            "END_CALL",
            "TIMESTAMP",
        ],
    );
    let err = |e: String| format!("{class}: {e}");
    let data = match a.keyword_or_positional("DATA") {
        Some(d) => parse_data(&d).map_err(|e| err(format!("DATA: {e}")))?,
        None => DEFAULT_DATA.as_bytes().to_vec(),
    };
    let mut rate = None;
    if rated {
        let r = match a.keyword_or_positional("RATE") {
            Some(s) => parse_uint(&s).map_err(|e| err(format!("RATE: {e}")))?,
            None => 10,
        };
        if r == 0 {
            return Err(err("RATE must be positive".into()));
        }
        rate = Some(r);
    }
    let limit = match a.keyword_or_positional("LIMIT") {
        Some(s) => parse_limit(&s).map_err(err)?,
        None => None,
    };
    if !rated {
        if let Some(b) = a.keyword_or_positional("BURST") {
            let b = parse_uint(&b).map_err(|e| err(format!("BURST: {e}")))?;
            if b == 0 {
                return Err(err("BURST must be positive".into()));
            }
        }
    }
    let active = match a.keyword_or_positional("ACTIVE") {
        Some(s) => parse_bool(&s).map_err(|e| err(format!("ACTIVE: {e}")))?,
        None => true,
    };
    if let Some(s) = a.keyword("STOP") {
        parse_bool(&s).map_err(|e| err(format!("STOP: {e}")))?;
    }
    a.keyword("END_CALL");
    a.keyword("TIMESTAMP");
    let size = a.keyword("DATASIZE").or_else(|| a.keyword("LENGTH"));
    a.finish()?;
    let mut data = data;
    if let Some(s) = size {
        let n = parse_uint(&s).map_err(|e| err(format!("DATASIZE: {e}")))? as usize;
        if n > 65535 {
            return Err(err(format!("DATASIZE {n} is over 65535")));
        }
        data.resize(n, 0);
    }
    Ok(Source {
        data,
        limit,
        rate,
        interval_ns: None,
        active,
        count: 0,
    })
}

/// `TimedSource([INTERVAL, DATA, LIMIT, STOP, ACTIVE])`: a copy of DATA every INTERVAL
/// seconds (default 0.5 s), packet i stamped i * INTERVAL; LIMIT -1 (default) for no limit.
fn make_timed(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "TimedSource";
    let mut a = Args::parse(
        c,
        config,
        &["INTERVAL", "DATA", "LIMIT", "STOP", "ACTIVE", "HEADROOM"],
    );
    let interval_ns = match a.keyword_or_positional("INTERVAL") {
        Some(s) => crate::elements::nat::flow::parse_seconds(&s)
            .map_err(|e| format!("{c}: INTERVAL: {e}"))?,
        None => 500_000_000,
    };
    let data = match a.keyword_or_positional("DATA") {
        Some(d) => parse_data(&d).map_err(|e| format!("{c}: DATA: {e}"))?,
        None => DEFAULT_DATA.as_bytes().to_vec(),
    };
    let limit = match a.keyword_or_positional("LIMIT") {
        Some(s) => parse_limit(&s).map_err(|e| format!("{c}: {e}"))?,
        None => None,
    };
    if let Some(s) = a.keyword_or_positional("STOP") {
        parse_bool(&s).map_err(|e| format!("{c}: STOP: {e}"))?;
    }
    let active = match a.keyword("ACTIVE") {
        Some(s) => parse_bool(&s).map_err(|e| format!("{c}: ACTIVE: {e}"))?,
        None => true,
    };
    a.keyword("HEADROOM");
    a.finish()?;
    Ok(Box::new(Source {
        data,
        limit,
        rate: None,
        interval_ns: Some(interval_ns),
        active,
        count: 0,
    }))
}

fn make_infinite(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(common("InfiniteSource", config, false)?))
}
fn make_rated(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(common("RatedSource", config, true)?))
}

impl Element for Source {
    fn ports(&self) -> Ports {
        Ports::push(0, 1)
    }
    fn role(&self) -> Role {
        Role::Generator
    }
    fn generate(&mut self, cx: &mut Cx) -> Option<Packet> {
        if !self.active || self.limit.is_some_and(|l| self.count >= l) {
            return None;
        }
        let mut p = cx.packet_from(&self.data);
        p.anno.timestamp_ns = match (self.rate, self.interval_ns) {
            (Some(r), _) => ((self.count as u128 * 1_000_000_000) / r as u128) as u64,
            (None, Some(i)) => self.count.saturating_mul(i),
            (None, None) => 0,
        };
        self.count += 1;
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "active": self.active})
    }
    fn write_handler(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "active" => self.active = parse_bool(value)?,
            "reset" => self.count = 0,
            "limit" => self.limit = parse_limit(value)?,
            _ => return Err(format!("no write handler '{name}'")),
        }
        Ok(())
    }
    fn code_size(&self) -> u32 {
        30
    }
}
