//! The reference plugins the lab models, one module each.

pub mod bandwidth;
pub mod bridge;
pub mod calico;
pub mod cilium;
pub mod common;
pub mod flannel;
pub mod host_device;
pub mod host_local;
pub mod ipvlan;
pub mod loopback;
pub mod macvlan;
pub mod memo;
pub mod multus;
pub mod portmap;
pub mod ptp;
pub mod sriov;
pub mod static_ipam;
pub mod tuning;

#[cfg(test)]
mod chain_tests;

use super::plugin::Plugin;

/// Every plugin the lab ships, as installed in `/opt/cni/bin`.
pub fn standard() -> Vec<Box<dyn Plugin>> {
    vec![
        Box::new(bandwidth::Bandwidth),
        Box::new(bridge::Bridge),
        Box::new(calico::Calico),
        Box::new(calico::CalicoIpam),
        Box::new(cilium::CiliumCni),
        Box::new(flannel::Flannel),
        Box::new(host_device::HostDevice),
        Box::new(host_local::HostLocal),
        Box::new(ipvlan::Ipvlan),
        Box::new(loopback::Loopback),
        Box::new(macvlan::Macvlan),
        Box::new(multus::Multus),
        Box::new(portmap::Portmap),
        Box::new(ptp::Ptp),
        Box::new(sriov::Sriov),
        Box::new(static_ipam::StaticIpam),
        Box::new(tuning::Tuning),
    ]
}
