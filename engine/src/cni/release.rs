//! Which release of containernetworking/plugins the reference plugin models behave as
//! (`cni plugins VERSION`, `--cni-plugins VERSION`).
//!
//! A node runs one build of the reference plugins from `/opt/cni/bin`, and releases differ
//! in ways a debugger meets: the CNI library each is built on decides what `VERSION`
//! answers, which config versions are accepted and whether `GC` and `STATUS` exist at all;
//! and a few plugin behaviours changed between releases. The lab models two:
//!
//! - **1.9.1**, the current upstream release (tag `v1.9.1`, built on the CNI library
//!   v1.3.0: spec 1.1.0, GC and STATUS). This is the lab's default, and what the plugin
//!   modules model (the reference's snapshot `3d27709`, after v1.9.1, differs from it only
//!   in nftables code the lab does not use).
//! - **1.1.1**, Debian bookworm's `containernetworking-plugins` (tag `v1.1.1`, built on the
//!   CNI library v1.0.1: spec up to 1.0.0, no GC or STATUS). It is the build the
//!   differential tests run (`/usr/lib/cni`), so `--cni-plugins 1.1.1` is the lab those
//!   tests compare with the real binaries.
//!
//! Where a plugin's behaviour differs by release, the plugin asks
//! [`crate::cni::registry::Registry::release`] and the difference is documented at that
//! place, with the upstream commit.

use std::fmt;

/// A release of containernetworking/plugins, the binaries a node's `/opt/cni/bin` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum PluginsRelease {
    /// v1.1.1 (March 2022), as Debian bookworm ships it: CNI library v1.0.1.
    V1_1_1,
    /// v1.9.1 (February 2026), the current upstream release: CNI library v1.3.0.
    #[default]
    V1_9_1,
}

impl PluginsRelease {
    /// Every release the lab models, oldest first.
    pub const ALL: [PluginsRelease; 2] = [PluginsRelease::V1_1_1, PluginsRelease::V1_9_1];

    /// The version as typed (`1.1.1`).
    pub fn as_str(self) -> &'static str {
        match self {
            PluginsRelease::V1_1_1 => "1.1.1",
            PluginsRelease::V1_9_1 => "1.9.1",
        }
    }

    /// Parse a release as a user types it (`1.1.1` or `v1.1.1`); the error lists the
    /// accepted values.
    pub fn parse(s: &str) -> Result<Self, String> {
        let bare = s.strip_prefix('v').unwrap_or(s);
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == bare)
            .ok_or_else(|| {
                format!(
                    "unknown containernetworking/plugins release {s:?}; the lab models {}",
                    Self::ALL
                        .iter()
                        .map(|r| format!("{} ({})", r.as_str(), r.origin()))
                        .collect::<Vec<_>>()
                        .join(" and ")
                )
            })
    }

    /// Where this build comes from, in a few words.
    pub(crate) fn origin(self) -> &'static str {
        match self {
            PluginsRelease::V1_1_1 => "Debian bookworm's containernetworking-plugins",
            PluginsRelease::V1_9_1 => "the current upstream release, the default",
        }
    }

    /// The CNI library (`github.com/containernetworking/cni`) the release is built on
    /// (its `go.mod`).
    pub(crate) fn cni_library(self) -> &'static str {
        match self {
            PluginsRelease::V1_1_1 => "1.0.1",
            PluginsRelease::V1_9_1 => "1.3.0",
        }
    }

    /// The library's `version.Current()`: what skel prints as `cniVersion` in a VERSION
    /// answer, and the newest config version the plugins accept.
    pub(crate) fn current_spec(self) -> &'static str {
        match self {
            PluginsRelease::V1_1_1 => "1.0.0",
            PluginsRelease::V1_9_1 => "1.1.0",
        }
    }

    /// Whether skel knows `GC` and `STATUS` (library 1.1.0 and later). Without them,
    /// skel answers `unknown CNI_COMMAND: GC` (after its container ID and interface name
    /// checks, which an empty GC or STATUS environment fails first).
    pub(crate) fn has_gc_and_status(self) -> bool {
        self >= PluginsRelease::V1_9_1
    }

    /// The binaries of this release the lab does not model: every directory of
    /// `plugins/{main,meta,ipam}` at the release's tag (but `windows`, which the Linux
    /// build skips) that is not one of the lab's plugin models. A chain that names one stops
    /// there ([`PluginsRelease::not_modelled`]).
    pub fn unmodelled(self) -> &'static [&'static str] {
        match self {
            PluginsRelease::V1_1_1 => &["dhcp", "firewall", "sbr", "vlan", "vrf"],
            // dummy came in v1.4.0, tap in v1.3.0.
            PluginsRelease::V1_9_1 => &["dhcp", "dummy", "firewall", "sbr", "tap", "vlan", "vrf"],
        }
    }

    /// The lab's error for a plugin this release ships but the lab does not model: on a
    /// real node the binary is in `/opt/cni/bin` and runs; in the lab it cannot, so the call
    /// fails where the plugin would have run. Its code is 0, as libcni's for a plugin it
    /// found but whose execution failed without a CNI error (`pkg/invoke/raw_exec.go`
    /// pluginErr: `netplugin failed …`); the text is the lab's own.
    pub(crate) fn not_modelled(self, plugin_type: &str) -> Option<super::types::CniError> {
        self.unmodelled().contains(&plugin_type).then(|| {
            super::types::CniError::new(
                0,
                format!(
                    "plugin {plugin_type:?} is in containernetworking/plugins {self} ({}) but not modelled by the lab (`cni plugins` lists the ones it models)",
                    super::runtime::CNI_PATH
                ),
            )
        })
    }

    /// An error message as this release words it, given v1.9.1's. Upstream lower-cased the
    /// first letter of many messages for Go's error style check after v1.1.1 (macvlan's
    /// CHECK: `Container macvlan mode …` became `container macvlan mode …`); only call
    /// this where the source shows exactly that change.
    pub(crate) fn capitalised_in_1_1_1(self, msg: String) -> String {
        if self != PluginsRelease::V1_1_1 {
            return msg;
        }
        let mut chars = msg.chars();
        match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => msg,
        }
    }

    /// The versions a plugin of this release reports: the plugin's own list (the newest
    /// release's) without the versions its library does not know yet (v1.0.1's
    /// `version.All` ends at 1.0.0).
    pub(crate) fn supported_versions(self, newest: &'static [&'static str]) -> Vec<&'static str> {
        let max = self.current_spec();
        newest
            .iter()
            .copied()
            .filter(|v| super::version::gte(max, v).unwrap_or(false))
            .collect()
    }
}

impl fmt::Display for PluginsRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::plugin::{ALL_VERSIONS, VERSIONS_FROM_030};

    /// Every binary of each release (`plugins/{main,meta,ipam}` at its tag, without
    /// `windows`) is a plugin the lab models or one of [`PluginsRelease::unmodelled`],
    /// never both.
    #[test]
    fn every_binary_of_a_release_is_modelled_or_listed_as_not() {
        let v1_1_1 = [
            "bandwidth",
            "bridge",
            "dhcp",
            "firewall",
            "host-device",
            "host-local",
            "ipvlan",
            "loopback",
            "macvlan",
            "portmap",
            "ptp",
            "sbr",
            "static",
            "tuning",
            "vlan",
            "vrf",
        ];
        let v1_9_1 = [
            "bandwidth",
            "bridge",
            "dhcp",
            "dummy",
            "firewall",
            "host-device",
            "host-local",
            "ipvlan",
            "loopback",
            "macvlan",
            "portmap",
            "ptp",
            "sbr",
            "static",
            "tap",
            "tuning",
            "vlan",
            "vrf",
        ];
        let registry = crate::cni::registry::Registry::standard();
        for (release, binaries) in [
            (PluginsRelease::V1_1_1, &v1_1_1[..]),
            (PluginsRelease::V1_9_1, &v1_9_1[..]),
        ] {
            for b in binaries {
                let modelled = registry.find(b).is_some();
                let listed = release.unmodelled().contains(b);
                assert!(
                    modelled != listed,
                    "{release} {b}: modelled {modelled}, listed {listed}"
                );
            }
            for u in release.unmodelled() {
                assert!(binaries.contains(u), "{release} does not ship {u}");
            }
        }
    }

    #[test]
    fn parses_with_or_without_v_and_names_the_choices() {
        assert_eq!(PluginsRelease::parse("1.1.1"), Ok(PluginsRelease::V1_1_1));
        assert_eq!(PluginsRelease::parse("v1.9.1"), Ok(PluginsRelease::V1_9_1));
        let e = PluginsRelease::parse("1.4.0").unwrap_err();
        assert!(e.contains("\"1.4.0\""), "{e}");
        assert!(e.contains("1.1.1 (Debian bookworm"), "{e}");
        assert!(e.contains("1.9.1 (the current upstream"), "{e}");
        assert_eq!(PluginsRelease::default(), PluginsRelease::V1_9_1);
    }

    /// Debian's 1.1.1 binaries answer VERSION with these lists (run in this repository's
    /// differential tests; host-local and bandwidth shown here).
    #[test]
    fn old_release_drops_what_its_library_does_not_know() {
        let old = PluginsRelease::V1_1_1;
        assert_eq!(
            old.supported_versions(ALL_VERSIONS),
            ["0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"]
        );
        assert_eq!(
            old.supported_versions(VERSIONS_FROM_030),
            ["0.3.0", "0.3.1", "0.4.0", "1.0.0"]
        );
        assert_eq!(
            PluginsRelease::V1_9_1.supported_versions(ALL_VERSIONS),
            ALL_VERSIONS
        );
        assert_eq!(
            old.capitalised_in_1_1_1("container macvlan mode bridge".into()),
            "Container macvlan mode bridge"
        );
        assert_eq!(
            PluginsRelease::V1_9_1.capitalised_in_1_1_1("container macvlan".into()),
            "container macvlan"
        );
        assert!(!old.has_gc_and_status());
        assert!(PluginsRelease::V1_9_1.has_gc_and_status());
    }
}
