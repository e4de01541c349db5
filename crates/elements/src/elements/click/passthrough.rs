//! Pass-through elements: `Null`, `SetTimestamp([TIMESTAMP])`, `Align(MODULUS, OFFSET)`.
//!
//! Ports: 1 agnostic input, 1 agnostic output. Null passes packets unchanged (cost: 1
//! instruction). SetTimestamp sets the timestamp annotation to the current simulated time
//! (the time the packet being processed entered the router: its trace or source time; Click
//! uses the wall clock) or to TIMESTAMP (seconds, Click's `SEC.USEC` form) when given; cost
//! 4 instructions and an 8 B meta-data write. Align checks its arguments (MODULUS 2, 4 or 8,
//! OFFSET below MODULUS) and passes packets unchanged: pktflow's packet buffers have no
//! machine alignment, so there is nothing to realign (cost: 2 instructions and a 4 B
//! meta-data read, the data-pointer test).
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::nat::flow::parse_seconds;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const NULL: ClassInfo = ClassInfo {
    name: "Null",
    summary: "pass packets unchanged",
    make: make_null,
};
pub const SET_TIMESTAMP: ClassInfo = ClassInfo {
    name: "SetTimestamp",
    summary: "set the timestamp annotation to the current simulated time",
    make: make_set_timestamp,
};
pub const ALIGN: ClassInfo = ClassInfo {
    name: "Align",
    summary: "(alignment check) pass packets unchanged",
    make: make_align,
};

enum Kind {
    Null,
    SetTimestamp(Option<u64>),
    Align,
}
struct Pass(Kind);

fn make_null(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("Null", config, &[]).finish()?;
    Ok(Box::new(Pass(Kind::Null)))
}
fn make_set_timestamp(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("SetTimestamp", config, &["FIRST", "PER_PACKET"]);
    let t = match a.optional() {
        Some(s) => Some(parse_seconds(&s).map_err(|e| format!("SetTimestamp: TIMESTAMP: {e}"))?),
        None => None,
    };
    if a.keyword("FIRST").is_some() {
        return Err("SetTimestamp: FIRST is not supported".into());
    }
    a.keyword("PER_PACKET");
    a.finish()?;
    Ok(Box::new(Pass(Kind::SetTimestamp(t))))
}
fn make_align(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Align", config, &["MODULUS", "OFFSET"]);
    let m = parse_uint(
        &a.keyword_or_positional("MODULUS")
            .ok_or("Align: missing argument MODULUS")?,
    )
    .map_err(|e| format!("Align: MODULUS: {e}"))?;
    let o = parse_uint(
        &a.keyword_or_positional("OFFSET")
            .ok_or("Align: missing argument OFFSET")?,
    )
    .map_err(|e| format!("Align: OFFSET: {e}"))?;
    a.finish()?;
    if ![2, 4, 8].contains(&m) {
        return Err(format!("Align: MODULUS must be 2, 4 or 8, found {m}"));
    }
    if o >= m {
        return Err(format!("Align: OFFSET {o} must be less than MODULUS {m}"));
    }
    Ok(Box::new(Pass(Kind::Align)))
}

impl Element for Pass {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        match self.0 {
            Kind::Null => cx.instr(1),
            Kind::SetTimestamp(t) => {
                cx.instr(4);
                p.anno.timestamp_ns = t.unwrap_or(cx.now_ns);
                cx.write_meta(8);
            }
            Kind::Align => {
                cx.instr(2);
                cx.read_meta(4);
            }
        }
        Some(p)
    }
    fn code_size(&self) -> u32 {
        8
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::{make, push_at};
    use pktflow_traffic::Packet;

    #[test]
    fn pass_and_timestamp() {
        let mut n = make("Null", "");
        let (out, t) = push_at(n.as_mut(), 0, Packet::from_bytes(&[1, 2]), 5);
        assert_eq!(out[0].1.data(), &[1, 2]);
        assert_eq!(t.accesses.len(), 0);
        let mut s = make("SetTimestamp", "");
        let (out, _) = push_at(s.as_mut(), 0, Packet::from_bytes(&[1]), 7_000);
        assert_eq!(out[0].1.anno.timestamp_ns, 7_000);
        let mut s = make("SetTimestamp", "1.5");
        let (out, _) = push_at(s.as_mut(), 0, Packet::from_bytes(&[1]), 7_000);
        assert_eq!(out[0].1.anno.timestamp_ns, 1_500_000_000);
        assert!(
            (crate::registry::find("Align").unwrap().make)("4, 4", &Default::default()).is_err()
        );
        assert!(
            (crate::registry::find("Align").unwrap().make)("4, 2", &Default::default()).is_ok()
        );
    }
}
