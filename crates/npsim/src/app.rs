//! Simulate an application (built-in name or Click file) on a named architecture: the
//! functional run streams its traces into the simulator.
use crate::config::{Mapping, Replication, SimConfig, TaskMap};
use crate::mapper::{
    anneal, greedy_assign, mapping_from, pe_loads, replicate, round_robin_assign, AnnealConfig,
    AnnealLog, CoarseModel, MapperKind, MapperLog, Profile, ReplicateConfig,
};
use crate::maxrate::{max_rate, MaxRate, MaxRateConfig};
use crate::stats::SimReport;
use pktflow_arch::np::NpArch;
use pktflow_profile::run::{Run, Source};
use pktflow_traffic::PrefixWeighting;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which application, traffic, architecture, PE count and replication scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppSpec {
    pub app: String,
    /// A pcap/pcapng file; none = synthetic traffic shaped for the application.
    pub trace: Option<String>,
    /// Synthetic packets (when no trace file).
    pub packets: u64,
    pub traffic_seed: u64,
    pub arch: String,
    /// PEs (default: the architecture's).
    pub pes: Option<u32>,
    pub replication: Replication,
    /// PEs per group for `subset` replication.
    pub subset_size: u32,
    /// Task mapper ([`crate::mapper::MapperKind`]): `round-robin`, `greedy` or
    /// `greedy+replicate`.
    pub mapper: String,
    /// How synthetic packets' destinations are drawn from the application's routes (none: the
    /// generator's Zipf default; `{"kind": "per_port"}` loads every output port equally).
    pub destinations: Option<PrefixWeighting>,
}

impl Default for AppSpec {
    fn default() -> Self {
        AppSpec {
            app: "router".into(),
            trace: None,
            packets: 20_000,
            traffic_seed: 1,
            arch: "npire".into(),
            pes: None,
            replication: Replication::Global,
            subset_size: 4,
            mapper: "round-robin".into(),
            destinations: None,
        }
    }
}

/// Interface tasks: the elements that receive from or transmit to a device.
pub fn is_interface_class(class: &str) -> bool {
    matches!(
        class,
        "FromDevice" | "PollDevice" | "ToDevice" | "FromHost" | "ToHost"
    )
}

/// An application ready to simulate: architecture, PE count, mapping and element names.
pub struct Prepared {
    pub arch: NpArch,
    pub pes: u32,
    pub mapping: Mapping,
    pub names: Vec<String>,
    /// Interface tasks (bound to PEs of their own).
    pub iface: Vec<bool>,
    pub spec: AppSpec,
}

fn out_dir() -> Result<PathBuf, String> {
    let d = std::env::temp_dir().join(format!("pktflow-npsim-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(d)
}

impl Prepared {
    pub fn new(spec: &AppSpec) -> Result<Prepared, String> {
        let arch = pktflow_arch::Arch::load(&spec.arch)?;
        let np = arch
            .as_np()
            .ok_or_else(|| {
                format!(
                    "architecture '{}' is not a network processor (try npire or ixp2400)",
                    spec.arch
                )
            })?
            .clone();
        MapperKind::parse(&spec.mapper)?;
        let pes = spec.pes.unwrap_or(np.np.pe_count);
        if pes == 0 {
            return Err("--pes must be at least 1".into());
        }
        let app = pktflow_profile::app::load_app(&spec.app)?;
        let names: Vec<String> = app.graph.elements.iter().map(|e| e.name.clone()).collect();
        let iface: Vec<bool> = app
            .graph
            .elements
            .iter()
            .map(|e| is_interface_class(&e.class))
            .collect();
        let mapping = Mapping::default_for(
            &iface,
            pes,
            np.np.interface_pes,
            spec.replication,
            spec.subset_size,
        )?;
        Ok(Prepared {
            arch: np,
            pes,
            mapping,
            names,
            iface,
            spec: spec.clone(),
        })
    }

    fn source(&self) -> Source {
        if let (None, Some(w)) = (&self.spec.trace, self.spec.destinations) {
            return Source::SyntheticWeighted {
                packets: self.spec.packets,
                seed: self.spec.traffic_seed,
                dst_weighting: w,
            };
        }
        Source::from_args(
            self.spec.trace.as_deref(),
            Some(self.spec.packets),
            self.spec.traffic_seed,
        )
    }

    /// The PE count and mapping a run uses: the prepared ones, or with idealization I every
    /// task on PEs of its own (one each without replication; as many as the prepared machine
    /// has with replication, so no task ever waits for a context).
    pub fn machine(&self, ideal: &crate::Ideal) -> (u32, Mapping) {
        self.machine_for(&self.mapping, ideal)
    }

    fn machine_for(&self, mapping: &Mapping, ideal: &crate::Ideal) -> (u32, Mapping) {
        if ideal.infinite_pes {
            let per_task = match self.spec.replication {
                Replication::None => 1,
                _ => self.pes,
            };
            mapping.infinite(per_task)
        } else {
            (self.pes, mapping.clone())
        }
    }

    /// One simulation, streaming a fresh functional run.
    pub fn simulate(&self, cfg: &SimConfig) -> Result<SimReport, String> {
        self.simulate_mapping(&self.mapping, cfg)
    }

    /// One simulation with another mapping of the prepared PEs.
    pub fn simulate_mapping(
        &self,
        mapping: &Mapping,
        cfg: &SimConfig,
    ) -> Result<SimReport, String> {
        let mut run = Run::start(&self.spec.app, &self.source(), &out_dir()?)?;
        let (pes, mapping) = self.machine_for(mapping, &cfg.ideal);
        crate::simulate(&self.arch, pes, &mapping, self.names.clone(), cfg, &mut run)
    }

    /// Section 3.1 step 1: every task on a PE of its own (all of that PE's contexts), one run
    /// at `inter_arrival_cycles`; per task, compute and context-holding cycles per packet not
    /// dropped by the NP, and the most-held lock's holding cycles per packet.
    pub fn measure(&self, cfg: &SimConfig, inter_arrival_cycles: f64) -> Result<Profile, String> {
        let n = self.names.len();
        let m = Mapping {
            tasks: vec![
                TaskMap {
                    pes: vec![0],
                    max_concurrent: u32::MAX
                };
                n
            ],
        };
        let (pes, inf) = m.infinite(1);
        let c = SimConfig {
            inter_arrival_cycles,
            ideal: Default::default(),
            ..cfg.clone()
        };
        let mut run = Run::start(&self.spec.app, &self.source(), &out_dir()?)?;
        let r = crate::simulate(&self.arch, pes, &inf, self.names.clone(), &c, &mut run)?;
        let np_drops: u64 = r.dropped_by_np.values().sum();
        let packets = r.injected.saturating_sub(np_drops).max(1) as f64;
        let mut p = Profile {
            weights: vec![0.0; n],
            occupancy: vec![0.0; n],
            lock_cycles_per_packet: r.locks.first().map_or(0.0, |l| l.held) * r.cycles as f64
                / packets,
        };
        for t in &r.tasks {
            p.weights[t.task as usize] = t.busy_cycles as f64 / packets;
            p.occupancy[t.task as usize] = t.occupancy_cycles as f64 / packets;
        }
        Ok(p)
    }

    /// Replace the round-robin mapping by the one the spec's mapper finds (section 3.1 steps
    /// 1 to 3). `weights`: step 1's measurement if already made (explore shares it). Returns
    /// what the mapper did and, for `greedy+replicate`, the maximum rate of the final mapping
    /// (its last search), so the caller need not search again.
    pub fn apply_mapper(
        &mut self,
        profile: Option<&Profile>,
        cfg: &SimConfig,
        m: &MaxRateConfig,
    ) -> Result<(MapperLog, Option<MaxRate>), String> {
        let kind = MapperKind::parse(&self.spec.mapper)?;
        let ifp = self.arch.np.interface_pes;
        let rr = round_robin_assign(&self.iface, self.pes, ifp);
        let mut log = MapperLog {
            mapper: kind.name().into(),
            home: rr.clone(),
            ..Default::default()
        };
        if kind == MapperKind::RoundRobin {
            if let Some(p) = profile {
                let w = &p.weights;
                log.weights = w.to_vec();
                log.max_pe_load = max_load(&pe_loads(&rr, w, self.pes));
                log.round_robin_max_pe_load = log.max_pe_load;
            }
            return Ok((log, None));
        }
        let prof = match profile {
            Some(p) => p.clone(),
            None => self.measure(cfg, m.start_cycles)?,
        };
        let w = prof.weights.clone();
        let home = greedy_assign(&w, &self.iface, self.pes, ifp);
        log.max_pe_load = max_load(&pe_loads(&home, &w, self.pes));
        log.round_robin_max_pe_load = max_load(&pe_loads(&rr, &w, self.pes));
        log.weights = w;
        log.home = home.clone();
        let rep = self.spec.replication;
        if kind == MapperKind::Greedy {
            let all = vec![rep != Replication::None; self.names.len()];
            self.mapping = mapping_from(
                &home,
                &self.iface,
                &all,
                self.pes,
                ifp,
                rep,
                self.spec.subset_size,
            );
            if rep != Replication::None {
                log.replicated = self.names.clone();
            }
            return Ok((log, None));
        }
        let mut start = m.start_cycles;
        let (mapping, best) = replicate(
            &home,
            &self.iface,
            &self.names,
            self.pes,
            ifp,
            rep,
            self.spec.subset_size,
            &ReplicateConfig::default(),
            &mut log,
            |mapping| {
                let mc = MaxRateConfig {
                    start_cycles: start,
                    ..m.clone()
                };
                let r = self.max_rate_mapping(mapping, cfg, &mc)?;
                start = r.inter_arrival_cycles;
                Ok(r)
            },
        )?;
        if kind != MapperKind::Anneal {
            self.mapping = mapping;
            return Ok((log, Some(best)));
        }
        // Step 4: anneal from the base mapping under the coarse model, check with a full search.
        let model = CoarseModel {
            weights: prof.weights.clone(),
            occupancy: prof.occupancy.clone(),
            contexts: self.arch.np.hardware_contexts_per_pe as f64,
            lock_cycles_per_packet: prof.lock_cycles_per_packet,
        };
        let base_repl: Vec<bool> = mapping
            .tasks
            .iter()
            .map(|t| t.max_concurrent == u32::MAX)
            .collect();
        let ac = AnnealConfig {
            seed: cfg.seed,
            ..Default::default()
        };
        let (a_home, a_repl) = anneal(
            &model,
            &home,
            &base_repl,
            &self.iface,
            self.pes,
            ifp,
            rep,
            self.spec.subset_size,
            &ac,
        );
        let cand = mapping_from(
            &a_home,
            &self.iface,
            &a_repl,
            self.pes,
            ifp,
            rep,
            self.spec.subset_size,
        );
        let mut a = AnnealLog {
            coarse_cycles_base: model.cycles_per_packet(&mapping, self.pes),
            coarse_cycles_annealed: model.cycles_per_packet(&cand, self.pes),
            packets_per_second_base: best.packets_per_second,
            packets_per_second_annealed: None,
            kept: false,
        };
        if cand == mapping {
            log.anneal = Some(a);
            self.mapping = mapping;
            return Ok((log, Some(best)));
        }
        let mc = MaxRateConfig {
            start_cycles: best.inter_arrival_cycles,
            ..m.clone()
        };
        let r = self.max_rate_mapping(&cand, cfg, &mc)?;
        log.searches += 1;
        a.packets_per_second_annealed = Some(r.packets_per_second);
        if r.packets_per_second > best.packets_per_second {
            a.kept = true;
            log.home = a_home;
            log.replicated = (0..a_repl.len())
                .filter(|&t| a_repl[t])
                .map(|t| self.names[t].clone())
                .collect();
            log.max_pe_load = max_load(&pe_loads(&log.home, &prof.weights, self.pes));
            log.anneal = Some(a);
            self.mapping = cand;
            Ok((log, Some(r)))
        } else {
            log.anneal = Some(a);
            self.mapping = mapping;
            Ok((log, Some(best)))
        }
    }

    /// Bottleneck finding (seed 000 section 5): maximum rates with resources idealized on top
    /// of `cfg.ideal` (normally none).
    pub fn bottleneck(
        &self,
        cfg: &SimConfig,
        m: &MaxRateConfig,
        b: &crate::BottleneckConfig,
        progress: impl FnMut(usize, &str),
    ) -> Result<crate::Bottleneck, String> {
        crate::bottleneck(
            |i| {
                let c = SimConfig {
                    ideal: i.union(&cfg.ideal),
                    ..cfg.clone()
                };
                self.max_rate(&c, m)
            },
            b,
            progress,
        )
    }

    /// Maximum sustainable rate; `cfg.inter_arrival_cycles` is ignored.
    pub fn max_rate(&self, cfg: &SimConfig, m: &MaxRateConfig) -> Result<MaxRate, String> {
        self.max_rate_mapping(&self.mapping, cfg, m)
    }

    /// Maximum sustainable rate with another mapping of the prepared PEs.
    pub fn max_rate_mapping(
        &self,
        mapping: &Mapping,
        cfg: &SimConfig,
        m: &MaxRateConfig,
    ) -> Result<MaxRate, String> {
        max_rate(
            |ia| {
                let c = SimConfig {
                    inter_arrival_cycles: ia,
                    ..cfg.clone()
                };
                self.simulate_mapping(mapping, &c)
            },
            m,
        )
    }
}

fn max_load(l: &[f64]) -> f64 {
    l.iter().copied().fold(0.0, f64::max)
}
