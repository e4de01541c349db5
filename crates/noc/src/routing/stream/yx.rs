//! `yx`: circuits on the YX dimension-order paths (Y first, then X) when those are pairwise
//! link-disjoint; otherwise every stream falls back to XY packet routing.
use super::{circuits_or_dor, Routed, StreamInput, StreamRouting};
use crate::routing::{check_disjoint, E, N, S, W};

pub struct Yx;

impl StreamRouting for Yx {
    fn name(&self) -> &'static str {
        "yx"
    }
    fn describe(&self) -> &'static str {
        "circuits on the YX dimension-order paths when they share no link; falls back to dor"
    }
    fn route(&self, input: &StreamInput) -> Routed {
        let m = input.mesh;
        let paths: Vec<Vec<u8>> = input
            .streams
            .iter()
            .map(|q| {
                let ((sx, sy), (dx, dy)) = (m.xy(q.src), m.xy(q.dst));
                let vert = if dy > sy { [S as u8] } else { [N as u8] };
                let horiz = if dx > sx { [E as u8] } else { [W as u8] };
                let mut p = vert.repeat(sy.abs_diff(dy));
                p.extend(horiz.repeat(sx.abs_diff(dx)));
                p
            })
            .collect();
        let n = paths.len();
        match check_disjoint(m, input.streams, &paths) {
            Ok(()) => circuits_or_dor(
                Some(paths),
                None,
                1,
                format!("YX paths of all {n} streams are disjoint"),
                None,
            ),
            Err(e) => circuits_or_dor(None, None, 1, format!("YX paths collide ({e})"), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::{Mesh, StreamReq};
    use crate::sim::PacketRouting;

    type Xy = (usize, usize);

    fn run(m: &Mesh, pairs: &[(Xy, Xy)]) -> (Vec<StreamReq>, Routed) {
        let s: Vec<StreamReq> = pairs
            .iter()
            .map(|&(a, b)| StreamReq {
                src: m.node(a.0, a.1),
                dst: m.node(b.0, b.1),
                weight: 1.0,
            })
            .collect();
        let input = StreamInput {
            mesh: m,
            streams: &s,
            retries: 0,
            seed: 1,
            exact_budget: 1,
        };
        let r = super::super::lookup("yx").unwrap().route(&input);
        (s, r)
    }

    #[test]
    fn yx_circuits_where_xy_collides() {
        // (0,0)->(1,1) and (1,0)->(1,1): XY both take (1,0)->S; YX goes down first
        let m = Mesh::new(3, 3).unwrap();
        let (s, r) = run(&m, &[((0, 0), (1, 1)), ((1, 0), (1, 1))]);
        let xy = super::super::xy_paths(&m, &s);
        assert!(check_disjoint(&m, &s, &xy).is_err());
        match r {
            Routed::Circuits { paths, .. } => {
                assert_eq!(paths, vec![vec![S as u8, E as u8], vec![S as u8]]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn yx_falls_back_to_dor_when_its_paths_collide() {
        // both leave (0,0) southwards first
        let m = Mesh::new(3, 3).unwrap();
        let (_, r) = run(&m, &[((0, 0), (0, 2)), ((0, 0), (1, 1))]);
        match r {
            Routed::Fallback { to, detail, .. } => {
                assert_eq!(to, PacketRouting::Dor);
                assert!(detail.contains("YX paths collide"), "{detail}");
            }
            other => panic!("{other:?}"),
        }
    }
}
