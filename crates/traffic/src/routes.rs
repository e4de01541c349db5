//! IPv4 routing tables: loading a BGP prefix dump and generating synthetic tables with the
//! same prefix-length distribution and nesting.
//!
//! Next hops: a table loaded from a dump has no next hops, only origin AS numbers; we set
//! `next_hop_port = asn % n_ports`, which spreads prefixes over the output ports
//! deterministically and keeps prefixes of one AS on one port.
//!
//! The bundled table `data/bgp/ipv4-bgp-prefixes-2014.dat.gz` (see `data/bgp/PROVENANCE.md`)
//! is found by [`bundled_table_path`] relative to this crate's source directory, which only
//! works from a source checkout; the Python package passes an explicit path instead (it ships
//! or locates the file itself and calls [`RouteTable::load`]).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::TrafficError;

/// One route: `prefix/len` (host bits zero) to output port `next_hop_port`, originated by
/// AS `asn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Route {
    pub prefix: u32,
    pub len: u8,
    pub next_hop_port: u16,
    pub asn: u32,
}

/// Network mask of a prefix length (0..=32).
pub fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len.min(32) as u32)
    }
}

impl Route {
    pub fn mask(&self) -> u32 {
        mask(self.len)
    }
    pub fn contains(&self, addr: u32) -> bool {
        addr & self.mask() == self.prefix
    }
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} port {} AS{}",
            Ipv4Addr::from(self.prefix),
            self.len,
            self.next_hop_port,
            self.asn
        )
    }
}

/// Prefix-length histogram of the bundled RouteViews table of 2014-05-13 (512,621 prefixes),
/// index = prefix length. Measured once from `data/bgp/ipv4-bgp-prefixes-2014.dat.gz` by
/// counting the `/len` of every non-comment line (a test re-measures it from the file).
pub const BGP_2014_LEN_COUNTS: [u32; 33] = [
    0, 0, 0, 0, 0, 0, 0, 0, // /0../7
    16, 12, 30, 90, 259, 487, 974, 1726, // /8../15
    13017, 7050, 11917, 24936, 35828, 37624, 57782, 47385, // /16../23
    270023, 918, 1060, 537, 138, 292, 331, 20,  // /24../31
    169, // /32
];

/// Of the prefixes of each length in the same table, how many lie inside a shorter prefix of
/// the table (measured the same way: 267,814 in all, 52.2%).
pub const BGP_2014_NESTED_COUNTS: [u32; 33] = [
    0, 0, 0, 0, 0, 0, 0, 0, // /0../7
    0, 8, 0, 3, 23, 78, 102, 348, // /8../15
    3103, 2859, 5058, 10667, 17053, 17716, 31314, 27512, // /16../23
    148563, 903, 1045, 533, 137, 288, 317, 20,  // /24../31
    164, // /32
];

/// Path of the bundled BGP table in a source checkout:
/// `$CARGO_MANIFEST_DIR/../../data/bgp/ipv4-bgp-prefixes-2014.dat.gz`. Installed Python
/// packages do not have this tree; they pass an explicit path to [`RouteTable::load`].
pub fn bundled_table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/bgp/ipv4-bgp-prefixes-2014.dat.gz")
}

/// A routing table: a list of routes (unordered as far as lookups are concerned; loaders
/// and the generator keep them sorted by prefix then length).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteTable {
    pub entries: Vec<Route>,
}

impl RouteTable {
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Load a `prefix<TAB>asn` dump (pyasn's IP-ASN format: `;` comment lines, blank lines
    /// ignored), gzip-compressed (detected by its magic bytes) or plain text.
    pub fn load(path: impl AsRef<Path>, n_ports: u16) -> Result<Self, TrafficError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let f = File::open(path).map_err(|e| TrafficError::io(&name, e))?;
        let mut r = BufReader::with_capacity(1 << 16, f);
        let gz = r
            .fill_buf()
            .map_err(|e| TrafficError::io(&name, e))?
            .starts_with(&[0x1f, 0x8b]);
        if gz {
            Self::from_reader(
                BufReader::with_capacity(1 << 16, flate2::read::GzDecoder::new(r)),
                &name,
                n_ports,
            )
        } else {
            Self::from_reader(r, &name, n_ports)
        }
    }

    /// The bundled 2014 table (see [`bundled_table_path`]).
    pub fn load_bundled(n_ports: u16) -> Result<Self, TrafficError> {
        Self::load(bundled_table_path(), n_ports)
    }

    /// Parse a dump from `r` (plain text); `name` is used in error messages.
    pub fn from_reader<R: BufRead>(
        mut r: R,
        name: &str,
        n_ports: u16,
    ) -> Result<Self, TrafficError> {
        if n_ports == 0 {
            return Err(TrafficError::Config(format!(
                "{name}: the number of ports must be at least 1"
            )));
        }
        let mut entries = Vec::new();
        let mut line = String::new();
        let mut lineno = 0usize;
        loop {
            line.clear();
            let n = r
                .read_line(&mut line)
                .map_err(|e| TrafficError::io(name, e))?;
            if n == 0 {
                break;
            }
            lineno += 1;
            let t = line.trim();
            if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
                continue;
            }
            let bad = |detail: String| TrafficError::Parse {
                path: name.to_string(),
                line: lineno,
                detail,
            };
            let mut fields = t.split_whitespace();
            let (pfx, asn) = match (fields.next(), fields.next(), fields.next()) {
                (Some(p), Some(a), None) => (p, a),
                _ => return Err(bad(format!("expected `prefix/len<TAB>asn`, found {t:?}"))),
            };
            let (addr, len) = pfx
                .split_once('/')
                .ok_or_else(|| bad(format!("prefix {pfx:?} has no /length")))?;
            let addr: Ipv4Addr = addr
                .parse()
                .map_err(|_| bad(format!("bad IPv4 address {addr:?}")))?;
            let len: u8 = match len.parse() {
                Ok(l) if l <= 32 => l,
                _ => return Err(bad(format!("bad prefix length {len:?} (expected 0..=32)"))),
            };
            let prefix = u32::from(addr);
            if prefix & !mask(len) != 0 {
                return Err(bad(format!("host bits set in {pfx}")));
            }
            let asn: u32 = asn
                .parse()
                .map_err(|_| bad(format!("bad AS number {asn:?}")))?;
            entries.push(Route {
                prefix,
                len,
                next_hop_port: (asn % n_ports as u32) as u16,
                asn,
            });
        }
        Ok(RouteTable { entries })
    }

    /// Number of routes of each prefix length (index = length).
    pub fn len_histogram(&self) -> [u64; 33] {
        let mut h = [0u64; 33];
        for r in &self.entries {
            h[r.len as usize] += 1;
        }
        h
    }

    /// Number of routes lying inside a shorter route of the table.
    pub fn nested_count(&self) -> usize {
        let set: HashSet<(u32, u8)> = self.entries.iter().map(|r| (r.prefix, r.len)).collect();
        self.entries
            .iter()
            .filter(|r| (0..r.len).any(|l| set.contains(&(r.prefix & mask(l), l))))
            .count()
    }

    /// Longest-prefix match by linear scan: the reference the fast lookups are tested
    /// against. Among equal prefixes the first listed wins.
    pub fn lookup_linear(&self, addr: u32) -> Option<&Route> {
        let mut best: Option<&Route> = None;
        for r in &self.entries {
            if r.contains(addr) && !matches!(best, Some(b) if b.len >= r.len) {
                best = Some(r);
            }
        }
        best
    }

    /// A synthetic table of `n` distinct prefixes whose length distribution is that of the
    /// 2014 table ([`BGP_2014_LEN_COUNTS`] scaled to `n` by largest remainders) and whose
    /// nesting per length matches [`BGP_2014_NESTED_COUNTS`] (about half inside a shorter
    /// prefix). Deterministic in `seed`. Prefixes are made shortest first:
    /// - a *nested* prefix of length L is a random L-bit sub-prefix of a parent drawn
    ///   uniformly from the prefixes made so far that are shorter than L;
    /// - a *top-level* prefix is a random L-aligned block of 1.0.0.0-223.255.255.255 outside
    ///   0/8, 10/8 and 127/8 and not covered by any shorter prefix made so far (after 256
    ///   failed draws any unused block is accepted).
    ///
    /// If a length runs out of room (only with huge `n` for the short lengths), its remaining
    /// prefixes move to the next longer length. AS numbers are our choice, not measured:
    /// a nested prefix keeps its parent's AS with probability 1/2 (a deaggregated block), any
    /// other prefix gets a uniform AS in 1..=64495; `next_hop_port = asn % n_ports`
    /// (`n_ports` 0 is treated as 1). The result is sorted by prefix, then length.
    pub fn generate(n: usize, seed: u64, n_ports: u16) -> Self {
        let n_ports = n_ports.max(1) as u32;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let counts = scale_counts(&BGP_2014_LEN_COUNTS, n);
        let mut made: Vec<Route> = Vec::with_capacity(n);
        let mut set: HashSet<(u32, u8)> = HashSet::with_capacity(n);
        let mut carry = 0usize;
        for len in 0..=32u8 {
            let want = counts[len as usize] + carry;
            carry = 0;
            let real = BGP_2014_LEN_COUNTS[len as usize] as f64;
            let nested_frac = if real > 0.0 {
                BGP_2014_NESTED_COUNTS[len as usize] as f64 / real
            } else {
                0.0
            };
            let n_nested = (want as f64 * nested_frac).round() as usize;
            // Parents: every prefix made so far is shorter than `len`.
            let n_parents = made.len();
            for i in 0..want {
                let nested = i < n_nested && n_parents > 0;
                let mut placed = None;
                if nested {
                    for _ in 0..64 {
                        let parent = made[rng.gen_range(0..n_parents)];
                        let free_bits = (len - parent.len) as u32;
                        let sub = if free_bits == 0 {
                            0
                        } else {
                            rng.gen_range(0..(1u64 << free_bits)) as u32
                        };
                        let prefix = parent.prefix
                            | if len == 32 {
                                sub
                            } else {
                                sub << (32 - len as u32)
                            };
                        if !set.contains(&(prefix, len)) {
                            let asn = if rng.gen_bool(0.5) {
                                parent.asn
                            } else {
                                rng.gen_range(1..=64495)
                            };
                            placed = Some((prefix, asn));
                            break;
                        }
                    }
                }
                if placed.is_none() {
                    for attempt in 0..1024 {
                        let block = rng.gen_range(
                            1u64 << len.saturating_sub(8)..(224u64 << len.saturating_sub(8)).max(2),
                        );
                        let prefix = if len == 0 {
                            0
                        } else {
                            (block << (32 - len as u32)) as u32
                        };
                        let first = prefix >> 24;
                        if first == 0
                            || first == 10
                            || first == 127
                            || first >= 224
                            || set.contains(&(prefix, len))
                        {
                            continue;
                        }
                        if attempt < 256 && (0..len).any(|l| set.contains(&(prefix & mask(l), l))) {
                            continue;
                        }
                        placed = Some((prefix, rng.gen_range(1..=64495)));
                        break;
                    }
                }
                match placed {
                    Some((prefix, asn)) => {
                        set.insert((prefix, len));
                        made.push(Route {
                            prefix,
                            len,
                            next_hop_port: (asn % n_ports) as u16,
                            asn,
                        });
                    }
                    None => carry += 1,
                }
            }
        }
        made.sort_unstable_by_key(|r| (r.prefix, r.len));
        RouteTable { entries: made }
    }
}

/// Scale a histogram to total `n` by largest remainders (deterministic ties: lower index).
fn scale_counts(real: &[u32; 33], n: usize) -> [usize; 33] {
    let total: u64 = real.iter().map(|&c| c as u64).sum();
    let mut out = [0usize; 33];
    let mut rem: Vec<(u64, usize)> = Vec::with_capacity(33);
    let mut assigned = 0usize;
    for (i, &c) in real.iter().enumerate() {
        let exact = c as u128 * n as u128;
        out[i] = (exact / total as u128) as usize;
        assigned += out[i];
        rem.push(((exact % total as u128) as u64, i));
    }
    rem.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rem.iter().take(n - assigned) {
        out[i] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<RouteTable, TrafficError> {
        RouteTable::from_reader(s.as_bytes(), "t.dat", 4)
    }

    #[test]
    fn parses_dump_lines_and_next_hops() {
        let t = parse("; comment\n;\n1.0.0.0/24\t15169\n\n10.0.0.0/8\t7\n0.0.0.0/0\t3\n").unwrap();
        assert_eq!(
            t.entries,
            vec![
                Route {
                    prefix: 0x0100_0000,
                    len: 24,
                    next_hop_port: 1,
                    asn: 15169
                },
                Route {
                    prefix: 0x0a00_0000,
                    len: 8,
                    next_hop_port: 3,
                    asn: 7
                },
                Route {
                    prefix: 0,
                    len: 0,
                    next_hop_port: 3,
                    asn: 3
                },
            ]
        );
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = |s: &str| parse(s).unwrap_err().to_string();
        assert_eq!(
            e(";x\n1.0.0.0/24\t1\n1.0.0.0\t2\n"),
            "t.dat:3: prefix \"1.0.0.0\" has no /length"
        );
        assert_eq!(
            e("1.0.0.0/33\t1\n"),
            "t.dat:1: bad prefix length \"33\" (expected 0..=32)"
        );
        assert_eq!(
            e("1.0.0.256/24\t1\n"),
            "t.dat:1: bad IPv4 address \"1.0.0.256\""
        );
        assert_eq!(e("1.0.0.1/24\t1\n"), "t.dat:1: host bits set in 1.0.0.1/24");
        assert_eq!(e("1.0.0.0/24\tAS1\n"), "t.dat:1: bad AS number \"AS1\"");
        assert_eq!(
            e("1.0.0.0/24\n"),
            "t.dat:1: expected `prefix/len<TAB>asn`, found \"1.0.0.0/24\""
        );
        assert!(RouteTable::from_reader("".as_bytes(), "t", 0).is_err());
    }

    #[test]
    fn plain_and_gzip_files_load_the_same() {
        use std::io::Write;
        let dir =
            std::env::temp_dir().join(format!("pktflow-traffic-routes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = "; x\n1.0.0.0/24\t15169\n2.0.0.0/16\t9\n";
        std::fs::write(dir.join("t.dat"), text).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        std::fs::write(dir.join("t.dat.gz"), gz.finish().unwrap()).unwrap();
        let a = RouteTable::load(dir.join("t.dat"), 8).unwrap();
        let b = RouteTable::load(dir.join("t.dat.gz"), 8).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 2);
        let e = RouteTable::load(dir.join("missing.dat"), 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.dat: "), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn linear_lookup_is_longest_match() {
        let t = parse("0.0.0.0/0\t1\n10.0.0.0/8\t2\n10.1.0.0/16\t3\n10.1.2.0/24\t4\n").unwrap();
        let asn = |a: u32| t.lookup_linear(a).map(|r| r.asn);
        assert_eq!(asn(0x0a01_0203), Some(4));
        assert_eq!(asn(0x0a01_0303), Some(3));
        assert_eq!(asn(0x0a02_0000), Some(2));
        assert_eq!(asn(0x0b00_0000), Some(1));
        assert_eq!(RouteTable::default().lookup_linear(1), None);
    }

    #[test]
    fn scaling_preserves_total_and_shape() {
        let c = scale_counts(&BGP_2014_LEN_COUNTS, 1000);
        assert_eq!(c.iter().sum::<usize>(), 1000);
        assert_eq!(c[24], 527); // 270023 / 512621 = 52.68%
        let full = scale_counts(&BGP_2014_LEN_COUNTS, 512_621);
        assert!(full
            .iter()
            .zip(BGP_2014_LEN_COUNTS)
            .all(|(&a, b)| a == b as usize));
    }

    #[test]
    fn generated_table_matches_real_distribution_and_nesting() {
        let n = 60_000;
        let t = RouteTable::generate(n, 7, 16);
        assert_eq!(t.len(), n);
        let set: HashSet<(u32, u8)> = t.entries.iter().map(|r| (r.prefix, r.len)).collect();
        assert_eq!(set.len(), n, "prefixes are distinct");
        assert!(t.entries.iter().all(|r| r.prefix & !r.mask() == 0
            && r.next_hop_port < 16
            && r.next_hop_port as u32 == r.asn % 16));
        assert!(t
            .entries
            .windows(2)
            .all(|w| (w[0].prefix, w[0].len) < (w[1].prefix, w[1].len)));
        let h = t.len_histogram();
        let real_total: u32 = BGP_2014_LEN_COUNTS.iter().sum();
        for l in 0..=32 {
            let want = BGP_2014_LEN_COUNTS[l] as f64 / real_total as f64;
            let got = h[l] as f64 / n as f64;
            assert!(
                (want - got).abs() < 0.001,
                "/{l}: generated {got:.4}, real {want:.4}"
            );
        }
        let nested = t.nested_count() as f64 / n as f64;
        assert!(
            (nested - 0.522).abs() < 0.02,
            "nested fraction {nested:.3}, real 0.522"
        );
        // Deterministic in the seed.
        assert_eq!(t, RouteTable::generate(n, 7, 16));
        assert_ne!(t, RouteTable::generate(n, 8, 16));
    }

    #[test]
    fn tiny_and_empty_generation() {
        assert!(RouteTable::generate(0, 1, 4).is_empty());
        let t = RouteTable::generate(5, 1, 0);
        assert_eq!(t.len(), 5);
        assert!(t.entries.iter().all(|r| r.next_hop_port == 0));
    }

    /// The real table: 512,621 prefixes, the measured histogram and nesting. Skipped with a
    /// note when the data file is missing (it is committed under data/bgp/).
    #[test]
    fn bundled_real_table_loads() {
        let path = bundled_table_path();
        if !path.exists() {
            eprintln!(
                "NOTE: {} missing; skipping the real-table test",
                path.display()
            );
            return;
        }
        let t = RouteTable::load(&path, 8).unwrap();
        assert_eq!(t.len(), 512_621);
        let h = t.len_histogram();
        for l in 0..=32 {
            assert_eq!(h[l], BGP_2014_LEN_COUNTS[l] as u64, "/{l}");
        }
        assert_eq!(
            t.entries[0],
            Route {
                prefix: 0x0100_0000,
                len: 24,
                next_hop_port: (15169 % 8) as u16,
                asn: 15169
            }
        );
        // The per-length nesting constants, re-measured.
        let set: HashSet<(u32, u8)> = t.entries.iter().map(|r| (r.prefix, r.len)).collect();
        let mut nested = [0u32; 33];
        for r in &t.entries {
            if (0..r.len).any(|l| set.contains(&(r.prefix & mask(l), l))) {
                nested[r.len as usize] += 1;
            }
        }
        assert_eq!(nested, BGP_2014_NESTED_COUNTS);
    }
}
