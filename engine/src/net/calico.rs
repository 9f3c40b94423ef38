//! What Calico's Felix programs into the nodes' filter tables, as the data path reads it:
//! the mark bits its policy chains set and test, and the names of its chains
//! (`felix/rules/static.go`, `felix/dataplane/driver.go`). `crate::netd::calico::felix`
//! writes the chains with these; the walker ([`super::trace`]) recognises them by them.

use crate::cni::netfilter::Target;

/// The accept mark bit (`felix/dataplane/driver.go`, mask 0xffff0000, lowest bits first).
pub(crate) const MARK_ACCEPT: u32 = 0x10000;
/// The pass mark bit.
pub(crate) const MARK_PASS: u32 = 0x20000;
/// Every chain Felix programs starts with this.
const CHAIN_PREFIX: &str = "cali-";
/// A workload endpoint's ingress chain: traffic to the workload (`cali-tw-<iface>`).
pub(crate) const TO_WORKLOAD: &str = "cali-tw-";
/// A workload endpoint's egress chain: traffic from the workload (`cali-fw-<iface>`).
pub(crate) const FROM_WORKLOAD: &str = "cali-fw-";

/// A filter chain as Felix names it, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FelixChain<'a> {
    /// A workload endpoint's chain of one direction.
    Endpoint {
        /// `cali-tw-` (to the workload) rather than `cali-fw-` (from it).
        ingress: bool,
        /// The endpoint's host-side interface (`cali…`).
        iface: &'a str,
    },
    /// Any other chain of Felix's (`cali-…`: dispatch, policy, profile chains).
    Other,
}

impl<'a> FelixChain<'a> {
    /// The chain called `name`, when Felix owns it.
    pub(crate) fn of(name: &'a str) -> Option<Self> {
        if let Some(iface) = name.strip_prefix(TO_WORKLOAD) {
            return Some(FelixChain::Endpoint {
                ingress: true,
                iface,
            });
        }
        if let Some(iface) = name.strip_prefix(FROM_WORKLOAD) {
            return Some(FelixChain::Endpoint {
                ingress: false,
                iface,
            });
        }
        name.starts_with(CHAIN_PREFIX).then_some(FelixChain::Other)
    }
}

/// The name of a workload endpoint's chain: `cali-tw-<iface>` (ingress) or
/// `cali-fw-<iface>`.
pub(crate) fn endpoint_chain_name(ingress: bool, iface: &str) -> String {
    let prefix = if ingress { TO_WORKLOAD } else { FROM_WORKLOAD };
    format!("{prefix}{iface}")
}

/// Whether a rule's target is Felix's accept: `MARK --set-xmark` setting the accept bit
/// (an endpoint chain then RETURNs on it and the packet goes on).
pub(crate) fn sets_accept(target: &Target) -> bool {
    matches!(target, Target::Mark { value, mask } if value & mask & MARK_ACCEPT != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_is_known_by_its_mark_however_the_rule_spells_it() {
        use crate::cni::netfilter::RuleSpec;
        let target = |rule: &str| RuleSpec::parse(rule).target;
        // Felix's own form, a comment that only mentions the mark, and --set-mark.
        let felix = format!(
            "-m comment --comment \"allow\" -j MARK --set-xmark {MARK_ACCEPT:#x}/{MARK_ACCEPT:#x}"
        );
        assert!(sets_accept(&target(&felix)));
        assert!(sets_accept(&target("-j MARK --set-mark 0x10000")));
        assert!(!sets_accept(&target(
            "-m comment --comment \"--set-xmark 0x10000/0x10000\" -j MARK --set-xmark 0x0/0x30000"
        )));
        assert!(!sets_accept(&target(
            "-m mark --mark 0x10000/0x10000 -j RETURN"
        )));
    }

    #[test]
    fn endpoint_chains_are_read_back_from_their_names() {
        let tw = endpoint_chain_name(true, "cali1234");
        assert_eq!(
            FelixChain::of(&tw),
            Some(FelixChain::Endpoint {
                ingress: true,
                iface: "cali1234"
            })
        );
        assert_eq!(
            FelixChain::of(&endpoint_chain_name(false, "cali1234")),
            Some(FelixChain::Endpoint {
                ingress: false,
                iface: "cali1234"
            })
        );
        assert_eq!(
            FelixChain::of("cali-from-wl-dispatch"),
            Some(FelixChain::Other)
        );
        assert_eq!(FelixChain::of("KUBE-FORWARD"), None);
    }
}
