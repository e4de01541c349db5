//! `ARPTable([keywords CAPACITY, ENTRY_CAPACITY, TIMEOUT])` — IP-to-Ethernet mappings shared by
//! the ARPQueriers that name it with `TABLE` (Click's ARPTable, an information element with no
//! ports). An ARPQuerier with `TABLE NAME` looks destinations up in, and records ARP replies
//! into, this table instead of its own, so replies learned by one querier serve the others.
//!
//! Keywords (Click's): TIMEOUT (time, default 5 min; 0 = entries never expire) is how long
//! an entry stays valid after the reply (or `insert`) that set it; it replaces the querying
//! elements' own TIMEOUT. CAPACITY (default 2048) and ENTRY_CAPACITY (default 0, unlimited)
//! are accepted and checked as unsigned numbers; pktflow holds waiting packets in each
//! ARPQuerier (its own CAPACITY applies) and does not bound the entry count.
//!
//! Handlers (Click's): read `table`: one line per entry, oldest update first, `IP VALID ETH
//! AGE` with VALID 1 for an unexpired entry and 0 otherwise, ETH in Click's dash-separated
//! upper-case form (`00-50-BA-85-84-A9`) and AGE the seconds since the entry was last set
//! (six decimals); `drops` (packets dropped for the table: always 0 here, as waiting packets
//! are the queriers'); `entries` (pktflow). Write `insert IP ETH` (an entry as if a reply had
//! just arrived), `delete IP`, `clear`. pktflow has no wall clock: "now" for handlers is the
//! timestamp of the last packet a querier using the table processed (0 before the first).
//!
//! Ports: none. Costs: none of its own (the queriers record their table accesses on their own
//! state objects, as before).
use crate::conf::{parse_ether, parse_ip, parse_uint, split_words, Args, InitEnv};
use crate::element::{Element, Ports};
use crate::elements::ip::arp_querier::Entry;
use crate::elements::nat::shared::lock;
use crate::registry::ClassInfo;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

pub const CLASS: ClassInfo = ClassInfo {
    name: "ARPTable",
    summary: "IP-to-Ethernet table shared by ARPQueriers (TABLE keyword)",
    make,
};

/// A map keyed by IPv4 address with a cheap hash (one multiply), for the ARP tables looked up
/// on every forwarded packet: the default SipHash costs more than the rest of the lookup, and
/// protects against chosen keys, which the addresses of a configured link cannot be. No
/// output depends on the map's order (the `table` handler sorts).
pub(crate) type IpMap<V> = HashMap<[u8; 4], V, BuildHasherDefault<IpHasher>>;

/// The hasher of [`IpMap`]: the key's bytes packed into a word, mixed by a multiply (the
/// golden-ratio constant) whose high half is folded into the low bits the table indexes by.
#[derive(Default, Clone, Copy)]
pub(crate) struct IpHasher(u64);

impl Hasher for IpHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        // The slice length prefix of an array key: the same for every key.
        self.0 ^= n as u64;
    }
    #[inline]
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 32)
    }
}

/// The shared table (see [`crate::conf::Shared::arp_tables`]).
#[derive(Debug)]
pub struct ArpTableState {
    pub(crate) entries: IpMap<Entry>,
    /// Entry lifetime in ns (`u64::MAX`: never expires). Set by the ARPTable element.
    pub timeout_ns: u64,
    /// Time of the last packet processed with the table (the handlers' "now").
    pub now_ns: u64,
    /// True once an ARPTable element has registered under the name.
    pub declared: bool,
}

impl Default for ArpTableState {
    fn default() -> Self {
        ArpTableState {
            entries: IpMap::default(),
            timeout_ns: 300_000_000_000,
            now_ns: 0,
            declared: false,
        }
    }
}

impl ArpTableState {
    /// Click's `table` handler text.
    pub fn table_text(&self) -> String {
        let mut v: Vec<(&[u8; 4], &Entry)> = self.entries.iter().collect();
        v.sort_by_key(|(ip, e)| (e.learned, **ip));
        let mut s = String::new();
        for (ip, e) in v {
            let ok = (e.expires >= self.now_ns) as u8;
            let age = self.now_ns.saturating_sub(e.learned);
            let eth: Vec<String> = e.eth.iter().map(|b| format!("{b:02X}")).collect();
            s.push_str(&format!(
                "{}.{}.{}.{} {ok} {} {}.{:06}\n",
                ip[0],
                ip[1],
                ip[2],
                ip[3],
                eth.join("-"),
                age / 1_000_000_000,
                (age % 1_000_000_000) / 1000
            ));
        }
        s
    }
}

struct ArpTable {
    state: Arc<Mutex<ArpTableState>>,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "ARPTable";
    let mut a = Args::parse(c, config, &["CAPACITY", "ENTRY_CAPACITY", "TIMEOUT"]);
    for k in ["CAPACITY", "ENTRY_CAPACITY"] {
        if let Some(s) = a.keyword(k) {
            parse_uint(&s).map_err(|e| format!("{c}: {k}: {e}"))?;
        }
    }
    let timeout_ns = match a.keyword("TIMEOUT") {
        Some(s) => crate::elements::nat::flow::parse_seconds(&s)
            .map_err(|e| format!("{c}: TIMEOUT: {e}"))?,
        None => 300_000_000_000,
    };
    a.finish()?;
    let state = env.shared.arp_tables.get(&env.name);
    {
        let mut g = lock(&state);
        g.timeout_ns = if timeout_ns == 0 {
            u64::MAX
        } else {
            timeout_ns
        };
        g.declared = true;
    }
    Ok(Box::new(ArpTable { state }))
}

impl Element for ArpTable {
    fn ports(&self) -> Ports {
        Ports::agnostic(0, 0)
    }

    fn stats(&self) -> serde_json::Value {
        let g = lock(&self.state);
        serde_json::json!({"table": g.table_text(), "drops": 0, "entries": g.entries.len()})
    }

    fn write_handler(&mut self, name: &str, value: &str) -> Result<(), String> {
        let mut g = lock(&self.state);
        match name {
            "insert" => {
                let w = split_words(value);
                let [ip, eth] = w.as_slice() else {
                    return Err(format!("insert: expected 'IP ETH', found '{value}'"));
                };
                let ip = parse_ip(ip).map_err(|e| format!("insert: {e}"))?;
                let eth = parse_ether(eth).map_err(|e| format!("insert: {e}"))?;
                let now = g.now_ns;
                let expires = now.saturating_add(g.timeout_ns);
                g.entries.insert(ip, Entry::learned(eth, now, expires));
                Ok(())
            }
            "delete" => {
                let ip = parse_ip(value.trim()).map_err(|e| format!("delete: {e}"))?;
                g.entries.remove(&ip);
                Ok(())
            }
            "clear" => {
                g.entries.clear();
                Ok(())
            }
            _ => Err(format!("no write handler '{name}'")),
        }
    }

    fn code_size(&self) -> u32 {
        32
    }
}

#[cfg(test)]
mod tests {
    use crate::conf::InitEnv;
    use crate::elements::ip::testutil::push_at;
    use crate::net;
    use pktflow_traffic::Packet;
    use std::sync::Arc;

    /// Two ARPQueriers share `arpt`: a reply learned by q1 lets q2 encapsulate at once; the
    /// handlers insert, delete and clear entries and `table` lists them as Click does.
    #[test]
    fn queriers_share_the_table_and_handlers_edit_it() {
        let shared = Arc::new(crate::conf::Shared::default());
        let env = |name: &str| InitEnv {
            name: name.into(),
            peers: Arc::new(vec![(
                "arpt".into(),
                "ARPTable".into(),
                "TIMEOUT 10s".into(),
            )]),
            shared: shared.clone(),
            ..Default::default()
        };
        let make = |class: &str, name: &str, conf: &str| {
            (crate::registry::find(class).unwrap().make)(conf, &env(name)).unwrap()
        };
        let mut t = make("ARPTable", "arpt", "TIMEOUT 10s");
        let mut q1 = make(
            "ARPQuerier",
            "q1",
            "10.0.0.1, 00:00:00:00:00:01, TABLE arpt",
        );
        let mut q2 = make(
            "ARPQuerier",
            "q2",
            "10.0.0.2, 00:00:00:00:00:02, TABLE arpt",
        );
        // A reply from 10.0.0.9 at 02:00:00:00:00:09 (RFC 826 layout) reaches q1 at t = 1 s.
        let mut r = Packet::zeroed(42);
        let d = r.data_mut();
        net::write_ether(
            d,
            [0, 0, 0, 0, 0, 1],
            [2, 0, 0, 0, 0, 9],
            net::ETHERTYPE_ARP,
        );
        net::write_arp(
            &mut d[14..],
            net::ARP_OP_REPLY,
            [2, 0, 0, 0, 0, 9],
            [10, 0, 0, 9],
            [0, 0, 0, 0, 0, 1],
            [10, 0, 0, 1],
        );
        push_at(q1.as_mut(), 1, r, 1_000_000_000);
        // q2 sends to 10.0.0.9 at t = 3.5 s without a query: Ethernet header to the learned
        // address, from q2's, type 0x0800, then the IP bytes unchanged.
        let ip = [
            0x45u8, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 2, 10, 0, 0, 9,
        ];
        let mut p = Packet::from_bytes(&ip);
        p.anno.dst_ip = [10, 0, 0, 9];
        let (out, _) = push_at(q2.as_mut(), 0, p, 3_500_000_000);
        assert_eq!(out.len(), 1);
        let mut want = vec![2, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 2, 0x08, 0x00];
        want.extend_from_slice(&ip);
        assert_eq!(out[0].1.data(), &want[..]);
        assert_eq!(
            t.stats()["table"],
            "10.0.0.9 1 02-00-00-00-00-09 2.500000\n"
        );

        t.write_handler("insert", "10.0.0.7 00:11:22:33:44:55")
            .unwrap();
        assert_eq!(
            t.stats()["table"],
            "10.0.0.9 1 02-00-00-00-00-09 2.500000\n10.0.0.7 1 00-11-22-33-44-55 0.000000\n"
        );
        let mut p = Packet::from_bytes(&ip);
        p.anno.dst_ip = [10, 0, 0, 7];
        let (out, _) = push_at(q1.as_mut(), 0, p, 3_500_000_000);
        assert_eq!(&out[0].1.data()[..6], &[0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
        // Past the 10 s TIMEOUT the learned entry is listed as invalid.
        let mut p = Packet::from_bytes(&ip);
        p.anno.dst_ip = [10, 0, 0, 7];
        push_at(q1.as_mut(), 0, p, 12_000_000_000);
        assert!(t.stats()["table"]
            .as_str()
            .unwrap()
            .starts_with("10.0.0.9 0 02-00-00-00-00-09 11.000000\n"));
        t.write_handler("delete", "10.0.0.9").unwrap();
        assert_eq!(t.stats()["entries"], 1);
        t.write_handler("clear", "").unwrap();
        assert_eq!(t.stats()["entries"], 0);
        assert!(t.write_handler("insert", "10.0.0.7").is_err());
        assert!(t.write_handler("delete", "ten").is_err());
        assert!((crate::registry::find("ARPTable").unwrap().make)("TIMEOUT x", &env("a")).is_err());
    }
}
