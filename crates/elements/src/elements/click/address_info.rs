//! `AddressInfo(NAME ADDR [ADDR...], ...)` — names for addresses, usable wherever an element
//! argument takes an address: `NAME` or `NAME:ip` for the IPv4 address, `NAME:net` (or
//! `NAME:ipnet`) for the network, `NAME:eth` for the Ethernet address; a bare `NAME` is the
//! address of the kind the argument expects (an IP address, a prefix (the network if one is
//! given), or an Ethernet address). ADDR is an IPv4 address (`10.0.0.1`), a prefix
//! (`10.0.0.0/8`; `10.0.0.1/8` gives both the address and the network) or an Ethernet
//! address. IPv6 addresses are refused (pktflow's elements are IPv4).
//!
//! Ports: none. The runtime collects every AddressInfo of the configuration before it
//! configures the other elements, so names may be used anywhere in the file, as in Click.
//! Costs: none (configuration only).
use crate::conf::{split_args, split_words, AddrEntry, Args, InitEnv};
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;

pub const CLASS: ClassInfo = ClassInfo {
    name: "AddressInfo",
    summary: "name addresses (NAME, NAME:ip, NAME:net, NAME:eth usable in other elements)",
    make,
};

struct AddressInfo {
    entries: Vec<AddrEntry>,
}

/// Parse an AddressInfo configuration into its entries.
pub fn parse_entries(config: &str) -> Result<Vec<AddrEntry>, String> {
    let c = "AddressInfo";
    let mut out = Vec::new();
    for arg in split_args(config) {
        if arg.is_empty() {
            continue;
        }
        let words = split_words(&arg);
        let name = &words[0];
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'/' || b == b'@')
            || name.as_bytes()[0].is_ascii_digit()
        {
            return Err(format!("{c}: '{name}' is not a valid name (letters, digits, '_', '/', '@'; not starting with a digit)"));
        }
        if words.len() < 2 {
            return Err(format!("{c}: '{name}' has no address"));
        }
        let mut e = AddrEntry {
            name: name.clone(),
            ..Default::default()
        };
        for w in &words[1..] {
            let (ip, eth, net) = (
                crate::conf::parse_ip(w),
                parse_ether_literal(w),
                w.contains('/')
                    .then(|| crate::conf::parse_prefix(w))
                    .transpose(),
            );
            if let Ok(Some((a, len))) = net {
                e.net = Some((a, len));
                if a.iter()
                    .zip(crate::conf::mask(len).to_be_bytes())
                    .any(|(x, m)| x & !m != 0)
                {
                    e.ip = Some(a);
                }
            } else if let Ok(a) = ip {
                e.ip = Some(a);
            } else if let Some(a) = eth {
                e.eth = Some(a);
            } else if w.contains("::") || w.matches(':').count() > 5 {
                return Err(format!(
                    "{c}: '{w}' (for '{name}'): IPv6 addresses are not supported"
                ));
            } else {
                return Err(format!(
                    "{c}: '{w}' (for '{name}') is not an IPv4 address, prefix or Ethernet address"
                ));
            }
        }
        out.push(e);
    }
    Ok(out)
}

fn parse_ether_literal(w: &str) -> Option<[u8; 6]> {
    let parts: Vec<&str> = w.split([':', '-']).collect();
    if parts.len() != 6 || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
        return None;
    }
    let mut e = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        e[i] = u8::from_str_radix(p, 16).ok()?;
    }
    Some(e)
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let _ = Args::parse("AddressInfo", "", &[]);
    Ok(Box::new(AddressInfo {
        entries: parse_entries(config)?,
    }))
}

impl Element for AddressInfo {
    fn ports(&self) -> Ports {
        Ports::agnostic(0, 0)
    }
    fn stats(&self) -> serde_json::Value {
        let m: serde_json::Map<String, serde_json::Value> = self
            .entries
            .iter()
            .map(|e| {
                let mut v = Vec::new();
                if let Some(ip) = e.ip {
                    v.push(crate::net::ip_to_string(ip));
                }
                if let Some((n, l)) = e.net {
                    v.push(format!("{}/{l}", crate::net::ip_to_string(n)));
                }
                if let Some(m) = e.eth {
                    v.push(
                        m.iter()
                            .map(|b| format!("{b:02x}"))
                            .collect::<Vec<_>>()
                            .join(":"),
                    );
                }
                (e.name.clone(), serde_json::json!(v))
            })
            .collect();
        serde_json::Value::Object(m)
    }
    fn code_size(&self) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::{parse_ether, parse_ip, parse_prefix, with_address_info};

    #[test]
    fn names_resolve_by_kind() {
        let t = parse_entries(
            "intern 10.0.0.1 10.0.0.0/8 00:50:ba:85:84:a9, // comment\n extern 209.6.198.213/24 00:e0:98:09:ab:af, nh 02:00:0a:11:22:1f",
        )
        .unwrap();
        assert_eq!(t.len(), 3);
        with_address_info(t, || {
            assert_eq!(parse_ip("intern").unwrap(), [10, 0, 0, 1]);
            assert_eq!(parse_ip("intern:ip").unwrap(), [10, 0, 0, 1]);
            assert_eq!(parse_prefix("intern").unwrap(), ([10, 0, 0, 0], 8));
            assert_eq!(parse_prefix("intern:ip").unwrap(), ([10, 0, 0, 1], 32));
            assert_eq!(
                parse_prefix("extern:net").unwrap(),
                ([209, 6, 198, 213], 24)
            );
            assert_eq!(parse_ip("extern").unwrap(), [209, 6, 198, 213]);
            assert_eq!(parse_ether("nh:eth").unwrap(), [2, 0, 10, 0x11, 0x22, 0x1f]);
            assert_eq!(parse_ether("intern").unwrap()[5], 0xa9);
            assert!(parse_ip("nh").is_err());
            assert!(parse_ip("other").is_err());
            assert!(parse_ether("intern:ip").is_err());
        });
        assert!(
            parse_ip("intern").is_err(),
            "the table is gone after the scope"
        );
    }

    #[test]
    fn bad_entries_are_refused() {
        assert!(parse_entries("x").unwrap_err().contains("no address"));
        assert!(parse_entries("x 1.2.3")
            .unwrap_err()
            .contains("not an IPv4"));
        assert!(parse_entries("x fe80::1").unwrap_err().contains("IPv6"));
        assert!(parse_entries("9x 1.2.3.4")
            .unwrap_err()
            .contains("valid name"));
    }
}
