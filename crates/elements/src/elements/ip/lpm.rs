//! Longest-prefix-match table used by `LookupIPRoute`, `StaticIPLookup` and `RadixIPLookup`.
//!
//! Structure: a three-level multibit trie with strides 16, 8, 8 and leaf pushing (every entry is
//! either a leaf holding the answer or a pointer to a 256-entry child node; there is no
//! backtracking). A lookup reads one 4-byte entry per level: one read for prefixes up to /16 and
//! most traffic, two for /17-/24, three for /25-/32.
//!
//! Why this and not DIR-24-8 or a binary radix trie: DIR-24-8 needs a 64 MB first level per
//! table (16M entries x 4 B), which makes every small router configuration and every randomized
//! test pay for a 64 MB fill; a binary radix trie walks up to 32 nodes. The 16-8-8 trie keeps a
//! 256 KB root, allocates second-level nodes only under /16s that hold longer prefixes (a 2014
//! BGP table of ~510k prefixes needs about 40k of them, ~40 MB), builds in one pass over the
//! prefixes sorted by length (each insert overwrites a contiguous range; because shorter
//! prefixes are inserted first, leaf pushing needs no fix-ups), and looks up in 1-3 dependent
//! loads. It is also what an NP would hold in SRAM/local store, so counting one static-state
//! read per level is the right cost.
//!
//! Entry encoding (u32): 0 = no route; bit 31 set = child node index in bits 0..30; otherwise a
//! leaf: bits 20..30 = output port + 1 (ports 0..2046), bits 0..19 = gateway index + 1
//! (0 = no gateway). Gateways live in a separate array, read only when a leaf names one.

/// One route: `addr/len` -> output `port`, optionally via gateway `gw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub addr: u32,
    pub len: u8,
    pub gw: Option<u32>,
    pub port: u16,
}

/// Largest output port a leaf can encode.
pub const MAX_PORT: u16 = 2046;
const CHILD: u32 = 1 << 31;

/// Result of a lookup and what it touched (for cost accounting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hit {
    /// Output port and gateway, `None` when no prefix matches.
    pub result: Option<(u16, Option<u32>)>,
    /// Number of trie levels read (1..=3).
    pub levels: u8,
    /// Entry index of each level read: root slot (0..65536) or 65536 + node * 256 + slot.
    pub keys: [u32; 3],
    /// Index of the gateway entry read, when the leaf names a gateway.
    pub gw_index: Option<u32>,
}

pub struct Lpm {
    root: Vec<u32>,
    nodes: Vec<u32>,
    gws: Vec<u32>,
    n_routes: usize,
}

impl Lpm {
    /// Build from `routes`. When the same prefix appears twice the later route wins.
    pub fn build(routes: &[Route]) -> Result<Lpm, String> {
        let mut order: Vec<usize> = (0..routes.len()).collect();
        order.sort_by_key(|&i| routes[i].len); // stable: later duplicates overwrite earlier ones
        let mut t = Lpm {
            root: vec![0; 1 << 16],
            nodes: Vec::new(),
            gws: Vec::new(),
            n_routes: routes.len(),
        };
        let mut gw_index = std::collections::HashMap::new();
        for i in order {
            let r = routes[i];
            if r.len > 32 {
                return Err(format!("prefix length {} is over 32", r.len));
            }
            if r.port > MAX_PORT {
                return Err(format!("output port {} is over {}", r.port, MAX_PORT));
            }
            let g = match r.gw {
                None => 0,
                Some(a) => {
                    let next = t.gws.len() as u32;
                    let idx = *gw_index.entry(a).or_insert_with(|| {
                        t.gws.push(a);
                        next
                    });
                    if idx + 1 >= 1 << 20 {
                        return Err("more than 2^20 distinct gateways".into());
                    }
                    idx + 1
                }
            };
            let leaf = ((r.port as u32 + 1) << 20) | g;
            t.insert(r.addr & crate::conf::mask(r.len), r.len, leaf);
        }
        Ok(t)
    }

    fn new_node(&mut self, fill: u32) -> u32 {
        let idx = (self.nodes.len() / 256) as u32;
        self.nodes.extend(std::iter::repeat_n(fill, 256));
        idx | CHILD
    }

    /// Child of entry `e` (creating it, filled with the leaf it replaces).
    fn child_of(&mut self, slot_ref: Slot) -> usize {
        let e = self.get(slot_ref);
        if e & CHILD != 0 {
            return (e & !CHILD) as usize;
        }
        let c = self.new_node(e);
        self.set(slot_ref, c);
        (c & !CHILD) as usize
    }

    fn get(&self, s: Slot) -> u32 {
        match s {
            Slot::Root(i) => self.root[i],
            Slot::Node(i) => self.nodes[i],
        }
    }
    fn set(&mut self, s: Slot, v: u32) {
        match s {
            Slot::Root(i) => self.root[i] = v,
            Slot::Node(i) => self.nodes[i] = v,
        }
    }

    fn insert(&mut self, addr: u32, len: u8, leaf: u32) {
        let len = len as u32;
        if len <= 16 {
            let start = (addr >> 16) as usize;
            let n = 1usize << (16 - len);
            self.root[start..start + n].fill(leaf);
            return;
        }
        let n2 = self.child_of(Slot::Root((addr >> 16) as usize));
        if len <= 24 {
            let start = n2 * 256 + ((addr >> 8) & 0xff) as usize;
            let n = 1usize << (24 - len);
            self.nodes[start..start + n].fill(leaf);
            return;
        }
        let n3 = self.child_of(Slot::Node(n2 * 256 + ((addr >> 8) & 0xff) as usize));
        let start = n3 * 256 + (addr & 0xff) as usize;
        let n = 1usize << (32 - len);
        self.nodes[start..start + n].fill(leaf);
    }

    /// Longest-prefix match for `addr`, with the entries read.
    #[inline]
    pub fn lookup(&self, addr: u32) -> Hit {
        let mut hit = Hit::default();
        let k0 = (addr >> 16) as usize;
        let mut e = self.root[k0];
        hit.keys[0] = k0 as u32;
        hit.levels = 1;
        let mut shift = 8;
        while e & CHILD != 0 {
            let idx = (e & !CHILD) as usize * 256 + ((addr >> shift) & 0xff) as usize;
            e = self.nodes[idx];
            hit.keys[hit.levels as usize] = (1 << 16) + idx as u32;
            hit.levels += 1;
            shift = 0;
        }
        if e != 0 {
            let port = ((e >> 20) - 1) as u16;
            let g = e & 0xf_ffff;
            let gw = if g == 0 {
                None
            } else {
                hit.gw_index = Some(g - 1);
                Some(self.gws[(g - 1) as usize])
            };
            hit.result = Some((port, gw));
        }
        hit
    }

    pub fn n_routes(&self) -> usize {
        self.n_routes
    }
    /// Second- and third-level nodes allocated.
    pub fn n_nodes(&self) -> usize {
        self.nodes.len() / 256
    }
    /// Table size in bytes.
    pub fn bytes(&self) -> usize {
        4 * (self.root.len() + self.nodes.len() + self.gws.len())
    }
}

#[derive(Clone, Copy)]
enum Slot {
    Root(usize),
    Node(usize),
}

/// Reference longest-prefix match by linear scan (tests): the longest matching prefix, the
/// later route among equal prefixes.
pub fn brute_force(routes: &[Route], addr: u32) -> Option<(u16, Option<u32>)> {
    let mut best: Option<&Route> = None;
    for r in routes {
        let m = crate::conf::mask(r.len);
        if addr & m == r.addr & m && best.is_none_or(|b| r.len >= b.len) {
            best = Some(r);
        }
    }
    best.map(|r| (r.port, r.gw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(a: [u8; 4], len: u8, gw: Option<[u8; 4]>, port: u16) -> Route {
        Route {
            addr: u32::from_be_bytes(a),
            len,
            gw: gw.map(u32::from_be_bytes),
            port,
        }
    }

    #[test]
    fn nested_prefixes_and_levels() {
        let routes = [
            r([0, 0, 0, 0], 0, Some([10, 0, 0, 254]), 1),
            r([10, 0, 0, 0], 8, None, 1),
            r([10, 1, 2, 0], 23, None, 2),
            r([10, 1, 2, 128], 25, None, 3),
            r([10, 1, 2, 129], 32, None, 0),
        ];
        let t = Lpm::build(&routes).unwrap();
        let ip = |a: [u8; 4]| u32::from_be_bytes(a);
        let h = t.lookup(ip([8, 8, 8, 8]));
        assert_eq!(h.result, Some((1, Some(ip([10, 0, 0, 254])))));
        assert_eq!(h.levels, 1);
        assert_eq!(t.lookup(ip([10, 9, 9, 9])).result, Some((1, None)));
        assert_eq!(t.lookup(ip([10, 1, 3, 1])).result, Some((2, None)));
        assert_eq!(t.lookup(ip([10, 1, 3, 1])).levels, 2);
        assert_eq!(t.lookup(ip([10, 1, 2, 130])).result, Some((3, None)));
        let h = t.lookup(ip([10, 1, 2, 129]));
        assert_eq!((h.result, h.levels), (Some((0, None)), 3));
        assert_eq!(t.lookup(ip([10, 1, 2, 127])).result, Some((2, None)));
        let empty = Lpm::build(&[r([10, 0, 0, 0], 8, None, 0)]).unwrap();
        assert_eq!(empty.lookup(ip([11, 0, 0, 0])).result, None);
    }

    fn arb_route() -> impl Strategy<Value = Route> {
        // Cluster addresses under few /8s so prefixes nest and overlap.
        (
            0u8..4,
            any::<u32>(),
            0u8..=32,
            proptest::option::of(any::<u32>()),
            0u16..8,
        )
            .prop_map(|(hi, lo, len, gw, port)| Route {
                addr: ((10 + hi as u32) << 24) | (lo & 0x00ff_ffff),
                len,
                gw,
                port,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn matches_brute_force(routes in proptest::collection::vec(arb_route(), 1..60),
                               probes in proptest::collection::vec(any::<u32>(), 64)) {
            let t = Lpm::build(&routes).unwrap();
            // Probe random addresses and addresses at and around every prefix.
            let mut addrs: Vec<u32> = probes.iter().map(|p| (10 + (p >> 30)) << 24 | (p & 0xff_ffff)).collect();
            for r in &routes {
                let m = crate::conf::mask(r.len);
                let base = r.addr & m;
                addrs.extend([base, base | !m, base.wrapping_sub(1), (base | !m).wrapping_add(1)]);
            }
            for a in addrs {
                prop_assert_eq!(t.lookup(a).result, brute_force(&routes, a), "addr {:08x}", a);
            }
        }
    }
}
