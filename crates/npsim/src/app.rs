//! Simulate an application (built-in name or Click file) on a named architecture: the
//! functional run streams its traces into the simulator.
use crate::config::{Mapping, Replication, SimConfig, TaskMap};
use crate::mapper::{
    anneal, greedy_assign, mapping_from, pe_loads, replicate, round_robin_assign, AnnealConfig,
    AnnealLog, CoarseModel, MapperKind, MapperLog, Profile, ReplicateConfig,
};
use crate::maxrate::{max_rate_with, MaxRate, MaxRateConfig};
use crate::stats::SimReport;
use pktflow_arch::np::NpArch;
use pktflow_profile::costs::CostTable;
use pktflow_profile::run::{Run, Source};
use pktflow_traffic::PrefixWeighting;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    /// Overrides of the architecture's parameters, `KEY=VALUE` in TOML syntax
    /// (`np.hardware_contexts_per_pe=4`), applied in order after the preset.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arch_set: Vec<String>,
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
    /// An explicit mapping by element name (`{"rt": {"pes": [2, 3], "group": 0}, "arp":
    /// {"pes": "xscale"}}`): the named elements replace their place in the round-robin default
    /// (the mapper must be `round-robin`); elements not named keep it. See [`ElementMap`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping: Option<BTreeMap<String, ElementMap>>,
    /// Measured per-element costs replacing the elements' estimates in every trace
    /// (`pktflow run --predict host`: [`pktflow_profile::costs`], docs/runtime.md "Prediction").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element_costs: Option<CostTable>,
}

/// Where one element runs in an explicit mapping ([`AppSpec::mapping`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElementMap {
    /// PE indices (0 to pes-1) and/or the control core by name (`"xscale"`, or the
    /// `[control_core] name` of the architecture; its index is `pes`); a list or one of them.
    pub pes: PeList,
    /// Task group for hand-off costs ([`TaskMap::group`]); none = no hand-off at its edges.
    #[serde(default)]
    pub group: Option<u32>,
    /// Instances that may run at once (default: any free context of its PEs).
    #[serde(default)]
    pub max_concurrent: Option<u32>,
}

/// One PE or a list of PEs ([`ElementMap::pes`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PeList {
    One(PeRef),
    Many(Vec<PeRef>),
}

/// A PE by index, or the control core by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PeRef {
    Index(u32),
    Name(String),
}

impl ElementMap {
    /// On PEs `pes` (the control core: index `pe_count`), unlimited instances.
    pub fn on(pes: Vec<u32>, group: Option<u32>) -> ElementMap {
        ElementMap {
            pes: PeList::Many(pes.into_iter().map(PeRef::Index).collect()),
            group,
            max_concurrent: None,
        }
    }
    /// On the control core.
    pub fn control_core(group: Option<u32>) -> ElementMap {
        ElementMap {
            pes: PeList::One(PeRef::Name("xscale".into())),
            group,
            max_concurrent: None,
        }
    }
}

/// Apply an explicit mapping by element name to `mapping` (`pes` processing PEs; the control
/// core, if the architecture has one, is PE `pes`). Errors name the element.
pub fn apply_explicit(
    mapping: &mut Mapping,
    names: &[String],
    explicit: &BTreeMap<String, ElementMap>,
    pes: u32,
    arch: &NpArch,
    arch_name: &str,
) -> Result<(), String> {
    for (name, em) in explicit {
        let Some(i) = names.iter().position(|n| n == name) else {
            let mut known = names.to_vec();
            known.sort();
            let more = known.len() > 30;
            known.truncate(30);
            return Err(format!(
                "mapping: unknown element '{name}' (the application's elements: {}{})",
                known.join(", "),
                if more { ", ..." } else { "" }
            ));
        };
        let refs: Vec<&PeRef> = match &em.pes {
            PeList::One(r) => vec![r],
            PeList::Many(v) => v.iter().collect(),
        };
        if refs.is_empty() {
            return Err(format!("mapping: element '{name}' has no PE"));
        }
        let mut list = Vec::with_capacity(refs.len());
        for r in refs {
            let p = match r {
                PeRef::Index(p) if *p < pes => *p,
                PeRef::Index(p) => {
                    return Err(format!(
                        "mapping: element '{name}' is mapped to PE {p} but there are {pes} PEs \
                         (0 to {}{})",
                        pes - 1,
                        if arch.control_core.is_some() {
                            "; the control core is \"xscale\""
                        } else {
                            ""
                        }
                    ))
                }
                PeRef::Name(n) => {
                    let is_cc = n.eq_ignore_ascii_case("xscale")
                        || n.eq_ignore_ascii_case("control_core")
                        || arch
                            .control_core
                            .as_ref()
                            .is_some_and(|c| c.name.eq_ignore_ascii_case(n));
                    if !is_cc {
                        return Err(format!(
                            "mapping: element '{name}': unknown PE '{n}' (a PE index or \"xscale\")"
                        ));
                    }
                    if arch.control_core.is_none() {
                        return Err(format!(
                            "mapping: element '{name}' is mapped to the control core but \
                             architecture '{arch_name}' has none ([control_core])"
                        ));
                    }
                    pes
                }
            };
            if !list.contains(&p) {
                list.push(p);
            }
        }
        if em.max_concurrent == Some(0) {
            return Err(format!(
                "mapping: element '{name}' allows 0 concurrent instances"
            ));
        }
        mapping.tasks[i] = TaskMap {
            pes: list,
            max_concurrent: em.max_concurrent.unwrap_or(u32::MAX),
            group: em.group,
        };
    }
    Ok(())
}

impl Default for AppSpec {
    fn default() -> Self {
        AppSpec {
            app: "router".into(),
            trace: None,
            packets: 20_000,
            traffic_seed: 1,
            arch: "npire".into(),
            arch_set: Vec::new(),
            pes: None,
            replication: Replication::Global,
            subset_size: 4,
            mapper: "round-robin".into(),
            destinations: None,
            mapping: None,
            element_costs: None,
        }
    }
}

/// Largest synthetic packet count of one simulation.
pub const MAX_PACKETS: u64 = 100_000_000;

impl AppSpec {
    /// Every field in its range; messages name the field as `spec.FIELD` and the option.
    pub fn validate(&self) -> Result<(), String> {
        if self.packets == 0 || self.packets > MAX_PACKETS {
            return Err(format!(
                "spec.packets (--packets) must be 1 to {MAX_PACKETS}, got {}",
                self.packets
            ));
        }
        if let Some(p) = self.pes {
            if p == 0 || p > pktflow_arch::np::MAX_PES {
                return Err(format!(
                    "spec.pes (--pes) must be 1 to {}, got {p}",
                    pktflow_arch::np::MAX_PES
                ));
            }
        }
        if self.subset_size == 0 || self.subset_size > pktflow_arch::np::MAX_PES {
            return Err(format!(
                "spec.subset_size (--subset-size) must be 1 to {}, got {}",
                pktflow_arch::np::MAX_PES,
                self.subset_size
            ));
        }
        MapperKind::parse(&self.mapper).map_err(|e| format!("spec.mapper (--mapper): {e}"))?;
        Ok(())
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
    /// Element class of every task (for reports: `out0 (Queue)`).
    pub classes: Vec<String>,
    /// Interface tasks (bound to PEs of their own).
    pub iface: Vec<bool>,
    pub spec: AppSpec,
    /// The application has elements that write files (see [`OutDir`]).
    writes_files: bool,
    /// [xform hook] the transformations' decisions (splits, early-signalling analysis).
    pub xform: crate::xform::XformState,
}

/// Where a functional run's output elements (ToDump with a relative name) write: a folder
/// `pktflow-npsim-PID` in the temporary directory. It is created only for an application that
/// has such an element (the built-in ones have none), and removed after the run when nothing
/// was written to it.
struct OutDir {
    path: PathBuf,
    created: bool,
}

impl OutDir {
    fn new(create: bool) -> Result<OutDir, String> {
        let path = std::env::temp_dir().join(format!("pktflow-npsim-{}", std::process::id()));
        if create {
            std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(OutDir {
            path,
            created: create,
        })
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if self.created {
            // Fails (and keeps the folder) when an element wrote a file there.
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// Element classes that write files named relative to the run's output folder.
fn writes_files(class: &str) -> bool {
    matches!(class, "ToDump")
}

impl Prepared {
    pub fn new(spec: &AppSpec) -> Result<Prepared, String> {
        let arch = pktflow_arch::Arch::load_with(&spec.arch, &spec.arch_set)?;
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
            return Err("spec.pes (--pes) must be at least 1".into());
        }
        if pes > pktflow_arch::np::MAX_PES {
            return Err(format!(
                "spec.pes (--pes) = {pes} is larger than the {} PEs supported",
                pktflow_arch::np::MAX_PES
            ));
        }
        let app = pktflow_profile::app::load_app(&spec.app)?;
        let names = app.graph.element_names();
        let classes: Vec<String> = app.graph.elements.iter().map(|e| e.class.clone()).collect();
        if let Some(t) = &spec.element_costs {
            t.validate(&names)
                .map_err(|e| format!("spec.element_costs: {e}"))?;
        }
        let writes_files = app.graph.elements.iter().any(|e| writes_files(&e.class));
        let iface: Vec<bool> = app
            .graph
            .elements
            .iter()
            .map(|e| is_interface_class(&e.class))
            .collect();
        let mut mapping = Mapping::default_for(
            &iface,
            pes,
            np.np.interface_pes,
            spec.replication,
            spec.subset_size,
        )?;
        if let Some(explicit) = &spec.mapping {
            if MapperKind::parse(&spec.mapper)? != MapperKind::RoundRobin {
                return Err(format!(
                    "an explicit mapping replaces the mapper: use mapper round-robin (the \
                     default), not '{}'",
                    spec.mapper
                ));
            }
            apply_explicit(&mut mapping, &names, explicit, pes, &np, &spec.arch)?;
        }
        Ok(Prepared {
            arch: np,
            pes,
            mapping,
            names,
            classes,
            iface,
            spec: spec.clone(),
            writes_files,
            xform: Default::default(), // [xform hook]
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
        self.simulate_mapping_with(mapping, cfg, &mut |_| {})
    }

    /// [`Prepared::simulate_mapping`] calling `progress(packets_injected)` now and then.
    pub fn simulate_mapping_with(
        &self,
        mapping: &Mapping,
        cfg: &SimConfig,
        progress: &mut dyn FnMut(u64),
    ) -> Result<SimReport, String> {
        let (pes, mapping) = self.machine_for(mapping, &cfg.ideal);
        // [slowpath hook] the slow-path policy rewrites the mapping and sets per-visit charges
        let (mapping, sp) =
            crate::slowpath::apply(&cfg.slow_path, &self.names, &self.classes, pes, &mapping)?;
        let cfg = &SimConfig {
            slow_path: sp,
            ..cfg.clone()
        };
        if cfg.slow_path.policy.is_some() && cfg.transform.any() {
            return Err(
                "slow_path.policy (--slow-path-policy) cannot be combined with --transform".into(),
            );
        }
        if cfg.transform.any() {
            // [xform hook] the transformations of section 2
            return crate::xform::simulate_planned(
                self,
                pes,
                &mapping,
                &self.xform.split,
                cfg,
                progress,
            );
        }
        let dir = OutDir::new(self.writes_files)?;
        let mut run = self.start_run(&dir.path)?;
        let r = crate::simulate_with(
            &self.arch,
            pes,
            &mapping,
            self.names.clone(),
            cfg,
            &mut run,
            progress,
        );
        drop(run);
        r
    }

    /// A fresh functional run of this application's traffic, its traces carrying the
    /// measured element costs when the spec has them.
    fn start_run(&self, out_dir: &std::path::Path) -> Result<Run, String> {
        let mut run = Run::start(&self.spec.app, &self.source(), out_dir)?;
        if let Some(t) = &self.spec.element_costs {
            run.set_costs(t)?;
        }
        Ok(run)
    }

    /// [xform hook] `f` over a fresh functional run of this application's traffic.
    pub fn with_run<T>(&self, f: impl FnOnce(&mut Run) -> Result<T, String>) -> Result<T, String> {
        let dir = OutDir::new(self.writes_files)?;
        let mut run = self.start_run(&dir.path)?;
        let r = f(&mut run);
        drop(run);
        r
    }

    /// Section 3.1 step 1: every task on a PE of its own (all of that PE's contexts), one run
    /// at `inter_arrival_cycles`; per task, compute and context-holding cycles per packet not
    /// dropped by the NP, and the most-held lock's holding cycles per packet.
    pub fn measure(&self, cfg: &SimConfig, inter_arrival_cycles: f64) -> Result<Profile, String> {
        let n = self.names.len();
        let m = Mapping {
            tasks: vec![TaskMap::new(vec![0], u32::MAX); n],
        };
        let (pes, inf) = m.infinite(1);
        let c = SimConfig {
            inter_arrival_cycles,
            ideal: Default::default(),
            ..cfg.clone()
        };
        let dir = OutDir::new(self.writes_files)?;
        let mut run = self.start_run(&dir.path)?;
        let r = crate::simulate(&self.arch, pes, &inf, self.names.clone(), &c, &mut run);
        drop(run);
        let r = r?;
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
        if let MapperKind::Plan(i) = kind {
            let run = crate::mapper::plan_fn(i)
                .ok_or("spec.mapper (--mapper): plan mapper not installed")?;
            let explicit =
                run(&self.spec, self.pes).map_err(|e| format!("mapper {}: {e}", kind.name()))?;
            let mut mapping = self.mapping.clone();
            apply_explicit(
                &mut mapping,
                &self.names,
                &explicit,
                self.pes,
                &self.arch,
                &self.spec.arch,
            )?;
            self.mapping = mapping;
            return Ok((log, None));
        }
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
            |mapping, ia| {
                pktflow_model::cancel::check().map_err(|e| e.to_string())?;
                let c = SimConfig {
                    inter_arrival_cycles: ia,
                    ..cfg.clone()
                };
                self.simulate_mapping(mapping, &c)
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

    /// The binding resource of a run of the prepared mapping ([`crate::diagnose`]).
    pub fn diagnose(&self, r: &SimReport) -> crate::Diagnosis {
        crate::diagnose(
            r,
            &self.mapping,
            &self.classes,
            self.arch.np.hardware_contexts_per_pe,
        )
    }

    /// Bottleneck finding (seed 000 section 5): maximum rates with resources idealized on top
    /// of `cfg.ideal` (normally none); its `diagnosis` is that of the baseline run.
    pub fn bottleneck(
        &self,
        cfg: &SimConfig,
        m: &MaxRateConfig,
        b: &crate::BottleneckConfig,
        progress: impl FnMut(usize, &str),
    ) -> Result<crate::Bottleneck, String> {
        let mut first: Option<crate::Diagnosis> = None;
        let mut out = crate::bottleneck(
            |i| {
                let c = SimConfig {
                    ideal: i.union(&cfg.ideal),
                    ..cfg.clone()
                };
                let r = self.max_rate(&c, m)?;
                if first.is_none() && !c.ideal.infinite_pes {
                    first = Some(self.diagnose(&r.report));
                }
                Ok(r)
            },
            b,
            progress,
        )?;
        out.diagnosis = first;
        Ok(out)
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
        self.max_rate_mapping_with(mapping, cfg, m, &mut |_, _, _| {})
    }

    /// [`Prepared::max_rate_mapping`] with `progress(done, estimated_total, inter_arrival)`
    /// before each simulation.
    pub fn max_rate_mapping_with(
        &self,
        mapping: &Mapping,
        cfg: &SimConfig,
        m: &MaxRateConfig,
        progress: &mut dyn FnMut(usize, usize, f64),
    ) -> Result<MaxRate, String> {
        if cfg.arrivals == crate::config::Arrivals::Recorded {
            return Err(
                "the maximum-rate search varies a fixed inter-arrival time: recorded \
                        arrivals are for one simulation (simulate --arrivals recorded \
                        [--time-scale F])"
                    .into(),
            );
        }
        max_rate_with(
            |ia| {
                let c = SimConfig {
                    inter_arrival_cycles: ia,
                    ..cfg.clone()
                };
                self.simulate_mapping(mapping, &c)
            },
            m,
            progress,
        )
    }
}

fn max_load(l: &[f64]) -> f64 {
    l.iter().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(arch: &str, mapping: &str) -> AppSpec {
        AppSpec {
            app: "router".into(),
            packets: 50,
            arch: arch.into(),
            mapping: Some(serde_json::from_str(mapping).unwrap()),
            ..Default::default()
        }
    }

    #[test]
    fn explicit_mapping_by_element_name() {
        let p = Prepared::new(&spec(
            "ixp2400",
            r#"{"rt": {"pes": [3, 2, 3], "group": 4, "max_concurrent": 5},
                "arpq0": {"pes": "xscale"}, "out0": {"pes": ["XScale", 7]}}"#,
        ))
        .unwrap();
        let t = |n: &str| &p.mapping.tasks[p.names.iter().position(|x| x == n).unwrap()];
        assert_eq!(t("rt").pes, vec![3, 2]);
        assert_eq!(t("rt").group, Some(4));
        assert_eq!(t("rt").max_concurrent, 5);
        // The control core is PE `pes` (8 MEs on ixp2400).
        assert_eq!(t("arpq0").pes, vec![8]);
        assert_eq!(t("arpq0").max_concurrent, u32::MAX);
        assert_eq!(t("out0").pes, vec![8, 7]);
        // Unnamed elements keep the round-robin default.
        let d = Prepared::new(&AppSpec {
            mapping: None,
            ..spec("ixp2400", "{}")
        })
        .unwrap();
        let i = p.names.iter().position(|x| x == "c1").unwrap();
        assert_eq!(p.mapping.tasks[i], d.mapping.tasks[i]);
        // And it simulates, the control core listed last among the PEs.
        let r = p
            .simulate(&SimConfig {
                inter_arrival_cycles: 5000.0,
                warmup_packets: 10,
                ..Default::default()
            })
            .unwrap();
        assert!(
            r.invariant_violations.is_empty(),
            "{:?}",
            r.invariant_violations
        );
        assert_eq!(r.pes.len(), 9);
        assert!(r.pes[8].control_core && r.pes[8].busy > 0.0);
    }

    #[test]
    fn explicit_mapping_errors_name_the_element() {
        let e = |arch: &str, m: &str| Prepared::new(&spec(arch, m)).err().unwrap();
        let x = e("ixp2400", r#"{"no_such_element": {"pes": [2]}}"#);
        assert!(x.contains("unknown element 'no_such_element'"), "{x}");
        let x = e("ixp2400", r#"{"rt": {"pes": [8]}}"#);
        assert!(
            x.contains("element 'rt' is mapped to PE 8 but there are 8 PEs"),
            "{x}"
        );
        let x = e("ixp2400", r#"{"rt": {"pes": []}}"#);
        assert!(x.contains("element 'rt' has no PE"), "{x}");
        let x = e("ixp2400", r#"{"rt": {"pes": "arm"}}"#);
        assert!(x.contains("element 'rt': unknown PE 'arm'"), "{x}");
        let x = e("ixp2400", r#"{"rt": {"pes": 2, "max_concurrent": 0}}"#);
        assert!(x.contains("element 'rt' allows 0"), "{x}");
        let x = e("npire", r#"{"rt": {"pes": "xscale"}}"#);
        assert!(
            x.contains(
                "element 'rt' is mapped to the control core but architecture 'npire' has none"
            ),
            "{x}"
        );
        let mut s = spec("ixp2400", r#"{"rt": {"pes": 2}}"#);
        s.mapper = "greedy".into();
        assert!(Prepared::new(&s).err().unwrap().contains("round-robin"));
        // Unknown fields are refused by the JSON parser.
        assert!(serde_json::from_str::<ElementMap>(r#"{"pes": 1, "grup": 2}"#).is_err());
    }
}
