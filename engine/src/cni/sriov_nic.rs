//! An SR-IOV NIC as the node's kernel shows it: one physical function (PF) netdev with a
//! PCI address, and its virtual functions (VFs), each a PCI function of its own with a
//! netdev (`ens1f0v0` …) that starts in the host namespace. The PF keeps an administrative
//! table of its VFs (`ip link set ens1f0 vf 3 vlan 100 mac … spoofchk on trust off`):
//! [`VfConfig`], kept in [`super::host::Host::vfs`] by VF PCI address.
//!
//! ## The lab's PCI scheme
//! The PF is `0000:03:00.0` (bus 3, device 0, function 0: a NIC in the first PCIe slot).
//! VF `n` is `0000:03:<02 + n/8>.<n%8>` — the layout an Intel X710/E810 PF at `03:00.0`
//! gives its VFs (first VF offset 16 functions, stride 1: devices 02, 03 … with functions 0–7):
//! VF 0 is `0000:03:02.0`, VF 7 `0000:03:02.7`, VF 8 `0000:03:03.0`. At most
//! [`MAX_VFS`] VFs per PF, which keeps every address inside bus 3 (device ≤ 0x09).
//!
//! ## Names and MACs
//! A VF netdev is named `<pf>v<n>`, as systemd's predictable naming names the iavf/mlx5 VF
//! netdevs of a PF (`ens1f0` → `ens1f0v0`); so the PF name leaves room for the suffix in
//! the kernel's 15 characters. MACs are derived from (node, name) with the lab's stable
//! hash: the same node always shows the same addresses.

use super::host::{Host, Link, LinkKind, Mac, SriovVf};

/// The most VFs the lab creates on one PF (an X710 port offers 64; `sriov_totalvfs`).
pub(crate) const MAX_VFS: u32 = 64;

/// The PCI address of the lab's PF.
pub(crate) const PF_PCI: &str = "0000:03:00.0";

/// The MTU a new PF and its VFs have.
pub(crate) const NIC_MTU: u32 = 1500;

/// The PCI address of VF `n` of the PF (see the module doc).
pub(crate) fn vf_pci(n: u32) -> String {
    format!("0000:03:{:02x}.{}", 2 + n / 8, n % 8)
}

/// The netdev name of VF `n` of `pf`.
pub(crate) fn vf_name(pf: &str, n: u32) -> String {
    format!("{pf}v{n}")
}

/// What the PF holds for one VF (`ip link show <pf>`'s `vf N …` line): what sriov-cni sets
/// through the PF and resets on DEL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VfConfig {
    /// The PF's netdev name.
    pub pf: String,
    /// The VF index.
    pub vf: u32,
    /// The administrative MAC (`00:00:00:00:00:00` when none was set).
    pub admin_mac: String,
    /// VLAN ID (0 = none).
    pub vlan: u32,
    /// VLAN QoS (PCP).
    pub qos: u32,
    /// `802.1q` or `802.1ad`.
    pub vlan_proto: String,
    /// Spoof checking.
    pub spoofchk: bool,
    /// Trust.
    pub trust: bool,
    /// `auto`, `enable` or `disable`.
    pub link_state: String,
    /// Minimum TX rate in Mbps (0 = none).
    pub min_tx_rate: u32,
    /// Maximum TX rate in Mbps (0 = none).
    pub max_tx_rate: u32,
}

impl VfConfig {
    /// A VF as the driver creates it: no MAC, no VLAN, spoof checking on, trust off.
    pub fn new(pf: &str, vf: u32) -> Self {
        VfConfig {
            pf: pf.to_string(),
            vf,
            admin_mac: "00:00:00:00:00:00".into(),
            vlan: 0,
            qos: 0,
            vlan_proto: "802.1q".into(),
            spoofchk: true,
            trust: false,
            link_state: "auto".into(),
            min_tx_rate: 0,
            max_tx_rate: 0,
        }
    }

    /// The line `ip link show <pf>` prints for the VF (iproute2's `print_vfinfo`).
    pub(crate) fn to_ip_link(&self) -> String {
        let mut s = format!(
            "vf {}     link/ether {} brd ff:ff:ff:ff:ff:ff",
            self.vf, self.admin_mac
        );
        if self.vlan != 0 {
            s.push_str(&format!(", vlan {}", self.vlan));
            if self.qos != 0 {
                s.push_str(&format!(", qos {}", self.qos));
            }
            if self.vlan_proto == "802.1ad" {
                s.push_str(", vlan protocol 802.1ad");
            }
        }
        if self.max_tx_rate != 0 || self.min_tx_rate != 0 {
            s.push_str(&format!(
                ", tx rate {} (Mbps), max_tx_rate {}Mbps, min_tx_rate {}Mbps",
                self.max_tx_rate, self.max_tx_rate, self.min_tx_rate
            ));
        }
        s.push_str(&format!(
            ", spoof checking {}, link-state {}, trust {}",
            if self.spoofchk { "on" } else { "off" },
            self.link_state,
            if self.trust { "on" } else { "off" }
        ));
        s
    }
}

/// Why a `--sriov-pf NAME --vfs N` request is refused, or `Ok`.
pub(crate) fn check_request(host: &Host, pf: &str, vfs: u32) -> Result<(), String> {
    let bad_name = pf.is_empty()
        || pf.len() > 15
        || pf == "."
        || pf == ".."
        || pf
            .chars()
            .any(|c| c == '/' || c == ':' || c.is_whitespace());
    if bad_name {
        return Err(format!(
            "invalid --sriov-pf {pf:?}: a Linux interface name is 1 to 15 characters without '/', ':' or whitespace, and not \".\" or \"..\" (e.g. ens1f0)"
        ));
    }
    if !(1..=MAX_VFS).contains(&vfs) {
        return Err(format!(
            "invalid --vfs {vfs}: a PF in the lab has 1 to {MAX_VFS} VFs (its sriov_totalvfs)"
        ));
    }
    let last = vf_name(pf, vfs - 1);
    if last.len() > 15 {
        return Err(format!(
            "invalid --sriov-pf {pf:?}: its VF netdevs would be named up to {last:?}, longer than the kernel's 15 characters; use a shorter PF name (e.g. ens1f0)"
        ));
    }
    for n in std::iter::once(pf.to_string()).chain((0..vfs).map(|i| vf_name(pf, i))) {
        if host.root.links.contains_key(&n) {
            return Err(format!(
                "invalid --sriov-pf {pf:?}: the node already has a link named {n:?}"
            ));
        }
    }
    Ok(())
}

/// Create the PF and its VFs in the host namespace (after [`check_request`]): the PF up
/// with [`PF_PCI`], each VF netdev down with its own PCI address, and the PF's VF table.
pub fn install(host: &mut Host, pf: &str, vfs: u32) {
    let node = host.node.clone();
    let mut pf_link = Link::new(
        pf,
        LinkKind::Physical,
        Mac(crate::util::hash::mac_bytes(&[&node, pf])),
        NIC_MTU,
    );
    pf_link.up = true;
    pf_link.set_pci(Some(PF_PCI.to_string()));
    host.root.links.insert(pf, pf_link);
    for n in 0..vfs {
        let name = vf_name(pf, n);
        let mut l = Link::new(
            &name,
            LinkKind::SriovVf(Box::new(SriovVf {
                pf: pf.to_string(),
                vf: n,
            })),
            Mac(crate::util::hash::mac_bytes(&[&node, &name])),
            NIC_MTU,
        );
        l.set_pci(Some(vf_pci(n)));
        host.root.links.insert(name, l);
        host.vfs.insert(vf_pci(n), VfConfig::new(pf, n));
    }
}

/// Where the netdev of the VF at `pci` is now: (namespace path, "" for the host; its name).
pub(crate) fn find_vf_netdev<'h>(host: &'h Host, pci: &str) -> Option<(&'h str, &'h Link)> {
    let is_it = |l: &&Link| l.pci() == Some(pci);
    if let Some(l) = host.root.links.values().find(is_it) {
        return Some(("", l));
    }
    host.netns
        .iter()
        .find_map(|(path, ns)| ns.links.values().find(is_it).map(|l| (path, l)))
}

/// The VFs of the node's PFs, by PCI address, with their PF and index (sysfs `virtfnN`).
pub fn vfs(host: &Host) -> impl Iterator<Item = (&str, &VfConfig)> {
    host.vfs.iter().map(|(pci, c)| (pci.as_str(), c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_scheme_and_names() {
        assert_eq!(vf_pci(0), "0000:03:02.0");
        assert_eq!(vf_pci(7), "0000:03:02.7");
        assert_eq!(vf_pci(8), "0000:03:03.0");
        assert_eq!(vf_pci(MAX_VFS - 1), "0000:03:09.7");
        assert_eq!(vf_name("ens1f0", 3), "ens1f0v3");
    }

    #[test]
    fn requests_are_checked() {
        let h = Host::new(
            "n",
            "192.168.0.9",
            "02:00:00:00:00:09".parse().expect("a MAC"),
        );
        assert!(check_request(&h, "ens1f0", 8).is_ok());
        assert!(
            check_request(&h, "ens1f0", 0)
                .unwrap_err()
                .contains("1 to 64")
        );
        assert!(check_request(&h, "ens1f0", 65).is_err());
        assert!(
            check_request(&h, "a/b", 2)
                .unwrap_err()
                .contains("interface name")
        );
        assert!(check_request(&h, "", 2).is_err());
        assert!(
            check_request(&h, "eth0", 2)
                .unwrap_err()
                .contains("already has")
        );
        assert!(
            check_request(&h, "enp175s0f1np12", 10)
                .unwrap_err()
                .contains("15")
        );
    }

    #[test]
    fn install_creates_pf_and_vfs() {
        let mut h = Host::new(
            "n",
            "192.168.0.9",
            "02:00:00:00:00:09".parse().expect("a MAC"),
        );
        install(&mut h, "ens1f0", 2);
        let pf = h.root.links.get("ens1f0").unwrap();
        assert_eq!(pf.pci(), Some(PF_PCI));
        assert!(pf.up);
        let vf = h.root.links.get("ens1f0v1").unwrap();
        assert_eq!(vf.pci(), Some("0000:03:02.1"));
        assert!(!vf.up);
        assert_eq!(
            vf.kind,
            LinkKind::SriovVf(Box::new(SriovVf {
                pf: "ens1f0".into(),
                vf: 1
            }))
        );
        assert_eq!(h.vfs.len(), 2);
        assert_eq!(
            find_vf_netdev(&h, "0000:03:02.1").unwrap().1.name,
            "ens1f0v1"
        );
        assert_eq!(
            h.vfs["0000:03:02.0"].to_ip_link(),
            "vf 0     link/ether 00:00:00:00:00:00 brd ff:ff:ff:ff:ff:ff, spoof checking on, link-state auto, trust off"
        );
    }
}
