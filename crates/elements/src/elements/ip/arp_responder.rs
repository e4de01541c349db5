//! `ARPResponder(IP/PREFIX ... ETH, ...)` — answers ARP requests for its addresses.
//!
//! Each argument is one or more IP addresses or prefixes (`10.0.0.1`, `10.0.0.0/8`) and one
//! Ethernet address. An ARP request (Ethernet type 0x0806, Ethernet/IPv4 ARP, operation 1)
//! whose target protocol address matches an entry is turned into the reply in place: operation
//! 2, sender = (the target address, the entry's Ethernet address), target = the requester;
//! the Ethernet header is addressed from the entry's Ethernet address to the requester. The
//! reply leaves on output 0. Other packets go to output 1 when it is connected (Click 2.1's
//! optional second output, e.g. for proxy ARP), else are dropped with reason `not an ARP
//! request` or `arp not answered` (requests for addresses not configured). As Click, the
//! ARP header must say Ethernet hardware and IPv4 protocol; its address lengths are not
//! checked.
//!
//! Ports: 1 push input, 1 or 2 push outputs.
//! Costs: 6 instructions and a 16-byte packet-data read (Ethernet type, ARP operation and
//! the addresses), 3 instructions per prefix compared (immediates); a reply adds 16
//! instructions and a 42-byte packet-data write.
use crate::conf::{parse_ether, parse_prefix, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ARPResponder",
    summary: "answer ARP requests for configured addresses",
    make,
};

pub struct ARPResponder {
    /// (network, mask, Ethernet address)
    entries: Vec<(u32, u32, [u8; 6])>,
    replies: u64,
    nout: usize,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "ARPResponder";
    let mut a = Args::parse(c, config, &[]);
    let mut entries = Vec::new();
    for arg in a.take_all_positional() {
        let words = split_words(&arg);
        let mut eth = None;
        let mut ips = Vec::new();
        for w in &words {
            // An AddressInfo name gives its IP address (else its network) and its Ethernet
            // address, as in Click.
            if let Some(e) = crate::conf::lookup_name(w, &[]) {
                if let Some(ip) = e.ip {
                    ips.push((ip, 32));
                } else if let Some(n) = e.net {
                    ips.push(n);
                }
                if let Some(m) = e.eth {
                    if eth.is_some_and(|x| x != m) {
                        return Err(format!("{c}: more than one Ethernet address in '{arg}'"));
                    }
                    eth = Some(m);
                }
                continue;
            }
            if w.contains(':') || (w.matches('-').count() == 5) {
                if eth.is_some() {
                    return Err(format!("{c}: more than one Ethernet address in '{arg}'"));
                }
                eth = Some(parse_ether(w).map_err(|e| format!("{c}: {e}"))?);
            } else {
                ips.push(parse_prefix(w).map_err(|e| format!("{c}: {e}"))?);
            }
        }
        let eth = eth.ok_or_else(|| {
            format!("{c}: expected 'IP/PREFIX ... ETH', missing the Ethernet address in '{arg}'")
        })?;
        if ips.is_empty() {
            return Err(format!(
                "{c}: expected 'IP/PREFIX ... ETH', missing the IP address in '{arg}'"
            ));
        }
        for (ip, len) in ips {
            let m = crate::conf::mask(len);
            entries.push((u32::from_be_bytes(ip) & m, m, eth));
        }
    }
    if entries.is_empty() {
        return Err(format!(
            "{c}: expected at least one 'IP/PREFIX ... ETH' argument"
        ));
    }
    Ok(Box::new(ARPResponder {
        entries,
        replies: 0,
        nout: 1,
    }))
}

impl ARPResponder {
    fn other(&self, p: Packet, cx: &mut Cx, reason: &'static str) {
        if self.nout > 1 {
            cx.emit(1, p);
        } else {
            cx.drop_packet(p, reason);
        }
    }
}

impl Element for ARPResponder {
    fn ports(&self) -> Ports {
        Ports::push(1, 1).with_outputs(1, 2)
    }
    fn set_port_counts(&mut self, _i: usize, o: usize) {
        self.nout = o.max(1);
    }
    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(6);
        let d = p.data();
        if d.len() < net::ETHER_LEN + net::ARP_LEN {
            return self.other(p, cx, "not an ARP request");
        }
        cx.read_pkt(16);
        let a = &d[net::ETHER_LEN..];
        if net::ether_type(d) != net::ETHERTYPE_ARP
            || net::be16(a, 0) != 1
            || net::be16(a, 2) != net::ETHERTYPE_IP
            || net::arp_op(a) != net::ARP_OP_REQUEST
        {
            return self.other(p, cx, "not an ARP request");
        }
        let tpa = net::arp_tpa(a);
        let t = u32::from_be_bytes(tpa);
        let mut found = None;
        for (i, (net_, m, eth)) in self.entries.iter().enumerate() {
            if t & m == *net_ {
                cx.instr(3 * (i as u32 + 1));
                found = Some(*eth);
                break;
            }
        }
        let Some(eth) = found else {
            cx.instr(3 * self.entries.len() as u32);
            return self.other(p, cx, "arp not answered");
        };
        let (sha, spa) = (net::arp_sha(a), net::arp_spa(a));
        // Click builds a fresh 42-byte reply (Ethernet + ARP, no padding): a request padded
        // to the 60-byte Ethernet minimum does not make a padded reply.
        let extra = p.len() - (net::ETHER_LEN + net::ARP_LEN);
        p.take(extra);
        let d = p.data_mut();
        net::write_ether(d, sha, eth, net::ETHERTYPE_ARP);
        net::write_arp(
            &mut d[net::ETHER_LEN..],
            net::ARP_OP_REPLY,
            eth,
            tpa,
            sha,
            spa,
        );
        cx.instr(16);
        cx.write_pkt(42);
        self.replies += 1;
        cx.emit(0, p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"replies": self.replies})
    }
    fn code_size(&self) -> u32 {
        90
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::net;
    use pktflow_traffic::Packet;

    #[test]
    fn reply_is_42_bytes_even_for_a_padded_request() {
        let mut e = make("ARPResponder", "10.0.0.1 00:00:c0:ae:67:ef");
        let mut req = arp(1, [2, 0, 0, 0, 0, 1], [10, 0, 0, 2], [0; 6], [10, 0, 0, 1]);
        req.resize(60, 0xee);
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&req));
        assert_eq!(out[0].1.len(), 42);
    }

    #[test]
    fn answers_requests_for_its_addresses_only() {
        let mut e = make(
            "ARPResponder",
            "10.0.0.1 00:00:c0:ae:67:ef, 172.16.0.0/16 02:00:00:00:00:99",
        );
        let asker = [2, 0, 0, 0, 0, 1];
        let req = arp(1, asker, [10, 0, 0, 2], [0; 6], [10, 0, 0, 1]);
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&req));
        let d = out[0].1.data();
        assert_eq!(
            (net::ether_dst(d), net::ether_src(d)),
            (asker, [0, 0, 0xc0, 0xae, 0x67, 0xef])
        );
        let a = &d[14..];
        assert_eq!(net::arp_op(a), 2);
        assert_eq!(
            (net::arp_sha(a), net::arp_spa(a)),
            ([0, 0, 0xc0, 0xae, 0x67, 0xef], [10, 0, 0, 1])
        );
        assert_eq!((net::arp_tha(a), net::arp_tpa(a)), (asker, [10, 0, 0, 2]));
        let req = arp(1, asker, [10, 0, 0, 2], [0; 6], [172, 16, 9, 9]);
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&req));
        assert_eq!(net::arp_sha(&out[0].1.data()[14..]), [2, 0, 0, 0, 0, 0x99]);
        let req = arp(1, asker, [10, 0, 0, 2], [0; 6], [10, 0, 0, 3]);
        let (out, t) = push(e.as_mut(), 0, Packet::from_bytes(&req));
        assert!(out.is_empty());
        assert_eq!(drop_reasons(&t), vec!["arp not answered"]);
        let rep = arp(2, asker, [10, 0, 0, 2], [0; 6], [10, 0, 0, 1]);
        assert_eq!(
            drop_reasons(&push(e.as_mut(), 0, Packet::from_bytes(&rep)).1),
            vec!["not an ARP request"]
        );
    }
}
