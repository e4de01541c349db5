//! `west_first`: the west-first turn model (Glass and Ni): a packet whose destination lies to
//! the west goes west first; otherwise it may take any minimal direction among east, north and
//! south. No turn into west is ever taken, so it is deadlock-free without escape channels; any
//! VC may be used.
use super::{minimal_dirs, Route, RoutingFunction, NO_PORT};
use crate::routing::{Mesh, W};

pub struct WestFirst;

impl RoutingFunction for WestFirst {
    fn name(&self) -> &'static str {
        "west_first"
    }
    fn describe(&self) -> &'static str {
        "west-first turn model: west first when the destination is west, otherwise any minimal direction; any VC"
    }
    #[inline]
    fn route(&self, _mesh: &Mesh, cur: (u16, u16), dst: (u16, u16)) -> Route {
        if cur == dst {
            return Route::eject();
        }
        if dst.0 < cur.0 {
            return Route {
                ports: [W as u8, 0],
                nports: 1,
                escape: NO_PORT,
            };
        }
        let (ports, nports) = minimal_dirs(cur, dst);
        Route {
            ports,
            nports,
            escape: NO_PORT,
        }
    }
}
