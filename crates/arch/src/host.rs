//! The `host` preset measured on the machine it describes (`pktflow arch measure-host`).
//!
//! The built-in `presets/host.toml` was measured on one reference machine; on any other it
//! describes another CPU (an "AMD EPYC" preset on an Intel Xeon). [`measure`] reads this machine's
//! cores, threads per core and caches from Linux's sysfs, times its clock with a chain of
//! dependent additions and its cache and memory latencies with a pointer chase (the methods the
//! reference preset's header describes), and [`measured_preset_toml`] writes them into a copy of
//! the built-in preset, dated. Saved at [`cache_path`], that file is what the name `host` loads
//! on this machine from then on ([`measured_text`]); the built-in stays the fallback, and says it
//! describes the reference machine.
use std::path::PathBuf;
use std::time::Instant;

/// What [`measure`] found. Latencies are the best of several runs, in nanoseconds per load.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HostMeasurement {
    pub cpu_model: String,
    pub logical_cpus: u32,
    pub threads_per_core: u32,
    pub cores: u32,
    /// Data (or unified) cache sizes by level 1..3, bytes (0 = none reported).
    pub cache_bytes: [u64; 3],
    pub line_bytes: u32,
    /// Dependent-add clock, MHz (None where it cannot be timed: not x86-64).
    pub clock_mhz: Option<u32>,
    /// Pointer-chase latency per level (L1, L2, L3 where present, DRAM), ns, with the working
    /// set used.
    pub latency_ns: Vec<(String, u64, f64)>,
    /// When it was measured, seconds since the Unix epoch (UTC).
    pub measured_unix: u64,
}

/// The identity a measurement belongs to: the CPU model and the counts.
pub fn fingerprint() -> String {
    let (model, logical, tpc) = (cpu_model(), logical_cpus(), threads_per_core());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("{model}|{logical}|{tpc}").bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Where this machine's measured preset is kept: `$PKTFLOW_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/pktflow`, else `$HOME/.cache/pktflow`; one file per machine identity.
pub fn cache_path() -> Option<PathBuf> {
    let dir = std::env::var_os("PKTFLOW_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("pktflow")))
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/pktflow")))?;
    Some(dir.join(format!("host-{}.toml", fingerprint())))
}

/// The measured preset's text and path, when this machine has been measured.
pub fn measured_text() -> Option<(String, String)> {
    let p = cache_path()?;
    let meta = std::fs::metadata(&p).ok()?;
    if !meta.is_file() || meta.len() > crate::MAX_FILE_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(&p).ok()?;
    Some((text, p.display().to_string()))
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH))
}

fn logical_cpus() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// Number of CPUs in a sysfs list such as `0-1,4`.
fn list_count(s: &str) -> u32 {
    s.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => match (a.parse::<u32>(), b.parse::<u32>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum::<u32>()
        .max(1)
}

fn threads_per_core() -> u32 {
    std::fs::read_to_string("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list")
        .map(|s| list_count(&s))
        .unwrap_or(1)
}

/// Parse a sysfs cache size (`48K`, `2048K`, `32M`).
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (n, mul) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    n.parse::<u64>().ok().map(|v| v * mul)
}

fn caches() -> ([u64; 3], u32) {
    let mut sizes = [0u64; 3];
    let mut line = 64;
    for i in 0..8 {
        let d = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{d}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        if let (Ok(l @ 1..=3), Some(b)) = (level.trim().parse::<usize>(), parse_size(&size)) {
            sizes[l - 1] = b;
        }
        if let Some(n) = read("coherency_line_size").and_then(|s| s.trim().parse().ok()) {
            line = n;
        }
    }
    (sizes, line)
}

/// The clock, from a chain of dependent 1-cycle additions (best of 7 runs of 4 M additions).
#[cfg(target_arch = "x86_64")]
fn clock_mhz() -> Option<u32> {
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let mut x: u64 = 0;
        let one: u64 = std::hint::black_box(1);
        let t = Instant::now();
        for _ in 0..40_000 {
            // 100 dependent adds of a register: each needs the previous result, one per cycle.
            // (An immediate operand would not do: recent Intel cores fold chains of
            // add-immediate at rename, which measured a 20 GHz "clock".)
            unsafe {
                std::arch::asm!(
                    ".rept 100", "add {x}, {one}", ".endr",
                    x = inout(reg) x,
                    one = in(reg) one,
                    options(nomem, nostack)
                );
            }
        }
        std::hint::black_box(x);
        best = best.min(t.elapsed().as_secs_f64());
    }
    let mhz = 4_000_000.0 / best / 1e6;
    (mhz.is_finite() && mhz > 50.0).then_some(mhz.round() as u32)
}

#[cfg(not(target_arch = "x86_64"))]
fn clock_mhz() -> Option<u32> {
    None
}

/// Nanoseconds per load of a pointer chase over a random cycle of `bytes / line` lines (best
/// of 3 runs of `loads` loads); a fixed-seed permutation, so the same working set every time.
fn chase_ns(bytes: u64, line: u32, loads: u64) -> f64 {
    let stride = (line as usize / 8).max(1);
    let lines = (bytes as usize / line as usize).max(2);
    let mut order: Vec<usize> = (0..lines).collect();
    // Fisher-Yates with a splitmix64 stream (no dependency for a shuffle).
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in (1..lines).rev() {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        order.swap(i, (z % (i as u64 + 1)) as usize);
    }
    let mut next = vec![0usize; lines * stride];
    for k in 0..lines {
        next[order[k] * stride] = order[(k + 1) % lines] * stride;
    }
    let mut best = f64::INFINITY;
    let mut p = 0usize;
    for _ in 0..lines.min(1 << 20) {
        p = next[p]; // warm the working set
    }
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..loads {
            p = next[p];
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(p);
    best * 1e9 / loads as f64
}

/// Measure this machine (a few seconds; the DRAM chase allocates up to 512 MiB).
pub fn measure() -> HostMeasurement {
    let (cache_bytes, line_bytes) = caches();
    let logical = logical_cpus();
    let tpc = threads_per_core().min(logical).max(1);
    let mut latency_ns = Vec::new();
    let levels = ["l1", "l2", "l3"];
    for (i, &b) in cache_bytes.iter().enumerate() {
        if b > 0 {
            // half the level's size: held by it, out of the level below (at most 16 MiB: a
            // virtual machine may report the whole socket's L3, 480 MiB on this one)
            let ws = (b / 2).min(16 << 20);
            latency_ns.push((
                levels[i].to_string(),
                ws,
                chase_ns(ws, line_bytes, 2_000_000),
            ));
        }
    }
    let largest = cache_bytes.iter().copied().max().unwrap_or(0);
    let dram = (largest * 2).clamp(64 << 20, 512 << 20);
    latency_ns.push((
        "dram".to_string(),
        dram,
        chase_ns(dram, line_bytes, 2_000_000),
    ));
    HostMeasurement {
        cpu_model: cpu_model(),
        logical_cpus: logical,
        threads_per_core: tpc,
        cores: (logical / tpc).max(1),
        cache_bytes,
        line_bytes,
        clock_mhz: clock_mhz(),
        latency_ns,
        measured_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    }
}

/// `YYYY-MM-DD HH:MM UTC` of a Unix time (civil-from-days, proleptic Gregorian).
pub fn utc_date(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        (secs % 3600) / 60
    )
}

/// The built-in `host` preset with this machine's measured values in place of the reference
/// machine's: cores, threads per core, clock, cache sizes and load latencies (each latency in
/// cycles at the measured clock, less the storage's occupancy, as the built-in's are); every
/// other value (documented ones: queue sizes, channels, the memory map) is the built-in's.
pub fn measured_preset_toml(m: &HostMeasurement) -> Result<String, String> {
    let builtin = crate::PRESETS
        .iter()
        .find(|(n, _)| *n == "host")
        .map(|(_, t)| *t)
        .ok_or("the built-in host preset is missing")?;
    let mut v: toml::Table = builtin
        .parse()
        .map_err(|e| format!("presets/host.toml: {e}"))?;
    let when = utc_date(m.measured_unix);
    let mhz = m.clock_mhz.unwrap_or_else(|| {
        v.get("np")
            .and_then(|n| n.get("pe_frequency_mhz"))
            .and_then(|x| x.as_integer())
            .unwrap_or(1000) as u32
    });
    let kib = |b: u64| format!("{} KiB", b >> 10);
    let desc = format!(
        "This machine, measured {when}: {} x {} ({} thread{} each) at {:.2} GHz{}, L1d {}, L2 {}{}",
        m.cores,
        m.cpu_model,
        m.threads_per_core,
        if m.threads_per_core == 1 { "" } else { "s" },
        mhz as f64 / 1000.0,
        if m.clock_mhz.is_none() {
            " (clock not measurable here: the reference value)"
        } else {
            ""
        },
        kib(m.cache_bytes[0]),
        kib(m.cache_bytes[1]),
        if m.cache_bytes[2] > 0 {
            format!(", L3 {}", kib(m.cache_bytes[2]))
        } else {
            String::new()
        },
    );
    let set = |v: &mut toml::Table, table: &[&str], key: &str, val: toml::Value| {
        let mut t = &mut *v;
        for k in table {
            t = t
                .entry(k.to_string())
                .or_insert_with(|| toml::Value::Table(Default::default()))
                .as_table_mut()
                .expect("a table");
        }
        t.insert(key.to_string(), val);
    };
    set(
        &mut v,
        &["preset"],
        "description",
        toml::Value::String(desc),
    );
    set(
        &mut v,
        &["preset"],
        "source",
        toml::Value::String(format!(
            "measured on this machine by `pktflow arch measure-host` on {when}: cores and caches from sysfs, the clock from a chain of dependent additions, latencies from a pointer chase over a random cycle of lines (half of each cache level, at most 16 MiB; {} MiB for DRAM); every other value is the built-in host preset's",
            m.latency_ns.last().map(|l| l.1 >> 20).unwrap_or(0)
        )),
    );
    set(&mut v, &["np"], "pe_count", (m.cores as i64).into());
    set(&mut v, &["np"], "pe_frequency_mhz", (mhz as i64).into());
    set(
        &mut v,
        &["np"],
        "hardware_contexts_per_pe",
        (m.threads_per_core as i64).into(),
    );
    let storage = v
        .get("storage")
        .and_then(|s| s.as_table())
        .cloned()
        .unwrap_or_default();
    for (level, _, ns) in &m.latency_ns {
        let Some(st) = storage.get(level).and_then(|s| s.as_table()) else {
            continue;
        };
        let occ = st
            .get("unpipelined_cycles")
            .and_then(|x| x.as_integer())
            .unwrap_or(1);
        let cycles = (ns * mhz as f64 / 1000.0).round() as i64;
        set(
            &mut v,
            &["storage", level],
            "pipelined_read_cycles",
            (cycles - occ).max(0).into(),
        );
    }
    for (i, level) in ["l1", "l2", "l3"].iter().enumerate() {
        if m.cache_bytes[i] > 0 && storage.contains_key(*level) {
            set(
                &mut v,
                &["storage", level],
                "capacity_bytes",
                (m.cache_bytes[i] as i64).into(),
            );
        }
    }
    let body = toml::to_string(&v).map_err(|e| e.to_string())?;
    let lat: Vec<String> = m
        .latency_ns
        .iter()
        .map(|(l, b, ns)| format!("{l} {ns:.1} ns over {} KiB", b >> 10))
        .collect();
    Ok(format!(
        "# The host preset of this machine, written by `pktflow arch measure-host` on {when}.\n\
         # Measured: {} ({} logical CPUs, {} per core), clock {}, latencies {}.\n\
         # Delete this file to fall back to the built-in preset; run the command again to re-measure.\n{body}",
        m.cpu_model,
        m.logical_cpus,
        m.threads_per_core,
        m.clock_mhz.map(|c| format!("{c} MHz")).unwrap_or("not measurable here".into()),
        lat.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_lists_and_sizes_parse() {
        assert_eq!(list_count("0-1"), 2);
        assert_eq!(list_count("0,4"), 2);
        assert_eq!(list_count("3\n"), 1);
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("2048K\n"), Some(2 << 20));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(utc_date(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_date(1_796_666_248), "2026-12-07 17:57 UTC");
        assert_eq!(utc_date(951_782_400), "2000-02-29 00:00 UTC");
    }

    #[test]
    fn a_measured_preset_loads_as_host_and_says_when() {
        let m = HostMeasurement {
            cpu_model: "Test CPU".into(),
            logical_cpus: 4,
            threads_per_core: 2,
            cores: 2,
            cache_bytes: [48 << 10, 2 << 20, 0],
            line_bytes: 64,
            clock_mhz: Some(2000),
            latency_ns: vec![
                ("l1".into(), 24 << 10, 2.0),
                ("l2".into(), 1 << 20, 6.0),
                ("dram".into(), 64 << 20, 100.0),
            ],
            measured_unix: 1_796_666_248,
        };
        let text = measured_preset_toml(&m).unwrap();
        let a = crate::Arch::from_toml_with(&text, "host-test.toml", &[]).unwrap();
        assert_eq!(a.preset.name, "host");
        assert!(a
            .preset
            .description
            .contains("measured 2026-12-07 17:57 UTC"));
        assert!(a.preset.description.contains("Test CPU"));
        let np = a.as_np().unwrap();
        assert_eq!((np.np.pe_count, np.np.hardware_contexts_per_pe), (2, 2));
        assert_eq!(np.np.pe_frequency_mhz, 2000);
        // 100 ns at 2 GHz = 200 cycles, less the DRAM's occupancy
        let occ = np.storage["dram"].unpipelined_cycles;
        assert_eq!(np.storage["dram"].pipelined_read_cycles + occ, 200);
        assert_eq!(np.storage["l2"].capacity_bytes, Some(2 << 20));
    }

    #[test]
    fn this_machines_clock_and_latencies_are_plausible() {
        if let Some(c) = clock_mhz() {
            assert!((100..10_000).contains(&c), "{c} MHz");
        }
        let (l1, big) = (
            chase_ns(16 << 10, 64, 200_000),
            chase_ns(32 << 20, 64, 200_000),
        );
        assert!(l1 > 0.0 && big > l1, "16 KiB {l1} ns, 32 MiB {big} ns");
        assert!(logical_cpus() >= threads_per_core().min(logical_cpus()));
    }
}
