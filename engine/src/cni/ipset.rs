//! A node's ipsets (`ipset(8)`): named sets of addresses or networks that iptables rules
//! test with `-m set --match-set NAME src|dst` ([`super::netfilter::Match::Set`]).
//!
//! IPv4 and IPv6 sets share one namespace of names, as in the kernel (`ip_set_net`), and
//! each set has a family (`family inet|inet6`). Two types are modelled: `hash:ip` (exact
//! addresses) and `hash:net` (networks, tested most specific prefix first, as the kernel's
//! `hash:net` walks its per-prefix lists). Calico's Felix keeps its selector sets
//! (`cali40s:<id>`) as `hash:net`; its named-port sets (`hash:ip,port`, `hash:net,port`)
//! and other types are refused with a clear error.
//!
//! Felix rewrites sets wholesale through `ipset restore`; the writer-facing call for that
//! is [`IpSets::replace_members`]. [`IpSets::add`] and [`IpSets::del`] take ipset's
//! `-exist` flag and otherwise fail as `ipset add`/`del` do. Error texts are ipset v7.17's
//! (without its `ipset v7.17: ` prefix) where the lab models the case.

use super::netfilter::Netfilter;
use ipnet::IpNet;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::IpAddr;

/// The set types the lab models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SetType {
    /// `hash:ip`: addresses, matched exactly.
    HashIp,
    /// `hash:net`: networks (a plain address is a /32 or /128), matched by containment.
    HashNet,
}

impl SetType {
    /// The type name as `ipset` prints it.
    pub fn name(self) -> &'static str {
        match self {
            SetType::HashIp => "hash:ip",
            SetType::HashNet => "hash:net",
        }
    }

    /// Parse a type name: the two modelled ones, or why not.
    pub fn from_name(name: &str) -> Result<SetType, String> {
        match name {
            "hash:ip" => Ok(SetType::HashIp),
            "hash:net" => Ok(SetType::HashNet),
            "hash:ip,port" | "hash:net,port" | "hash:ip,port,ip" | "hash:ip,port,net"
            | "hash:ip,mark" | "hash:net,net" | "hash:net,port,net" | "hash:net,iface"
            | "hash:mac" | "hash:ip,mac" | "bitmap:ip" | "bitmap:ip,mac" | "bitmap:port"
            | "list:set" => Err(format!(
                "the lab models the set types hash:ip and hash:net only, not {name}"
            )),
            // ipset's own words for a name it does not know.
            other => Err(format!("Syntax error: typename '{other}' is unknown")),
        }
    }
}

impl fmt::Display for SetType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set's address family (`family inet|inet6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// IPv4 (`inet`, the default).
    Inet,
    /// IPv6 (`inet6`).
    Inet6,
}

impl Family {
    /// The family an address belongs to.
    pub fn of(ip: &IpAddr) -> Family {
        if ip.is_ipv6() {
            Family::Inet6
        } else {
            Family::Inet
        }
    }

    /// The name `ipset` prints.
    pub fn name(self) -> &'static str {
        match self {
            Family::Inet => "inet",
            Family::Inet6 => "inet6",
        }
    }

    fn max_prefix(self) -> u8 {
        match self {
            Family::Inet => 32,
            Family::Inet6 => 128,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The longest set name (`IPSET_MAXNAMELEN` is 32 with the terminating NUL).
pub(crate) const MAX_NAME_LEN: usize = 31;

/// `maxelem` when `ipset create` is not given one (Felix passes `maxelem 1048576`, its
/// `MaxIPSetSize` default).
pub const DEFAULT_MAXELEM: u32 = 65536;

/// The hash table options `ipset save` prints and the lab does not vary.
const HASHSIZE: u32 = 1024;
const BUCKETSIZE: u32 = 12;

/// A hash:ip member given as an IPv4 CIDR adds every address in it (as ipset does); the
/// lab expands at most this many.
const MAX_EXPAND: u32 = 1 << 16;

/// One set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpSet {
    kind: SetType,
    family: Family,
    maxelem: u32,
    /// Members as networks (a hash:ip member is a host network), host bits cleared.
    members: BTreeSet<IpNet>,
    /// For hash:net: how many members have each prefix length, so a test looks up only
    /// the lengths present, longest first (the kernel's `nets[]` per-cidr array).
    prefixes: BTreeMap<u8, usize>,
}

impl IpSet {
    fn new(kind: SetType, family: Family, maxelem: u32) -> Self {
        IpSet {
            kind,
            family,
            maxelem,
            members: BTreeSet::new(),
            prefixes: BTreeMap::new(),
        }
    }

    /// `hash:ip` or `hash:net`.
    pub fn kind(&self) -> SetType {
        self.kind
    }

    /// `inet` or `inet6`.
    pub fn family(&self) -> Family {
        self.family
    }

    /// The most members it takes.
    pub fn maxelem(&self) -> u32 {
        self.maxelem
    }

    /// How many members it has.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether it has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members, sorted by address then prefix length.
    pub fn members(&self) -> impl Iterator<Item = &IpNet> {
        self.members.iter()
    }

    /// Whether `ip` is in the set: for hash:ip an equal member, for hash:net a member
    /// network containing it. An address of the other family is never in it.
    pub fn contains(&self, ip: IpAddr) -> bool {
        if Family::of(&ip) != self.family {
            return false;
        }
        match self.kind {
            SetType::HashIp => self.members.contains(&IpNet::from(ip)),
            SetType::HashNet => {
                self.prefixes.keys().rev().any(|&len| {
                    IpNet::new(ip, len).is_ok_and(|n| self.members.contains(&n.trunc()))
                })
            }
        }
    }

    /// Parse one member as `ipset add` takes it, for this set's type and family.
    fn parse_member(&self, text: &str) -> Result<Vec<IpNet>, String> {
        let max = self.family.max_prefix();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("Syntax error: '{p}' is invalid as number"));
                }
                match p.parse::<u8>() {
                    Ok(n) if n <= max => (a, Some(n)),
                    _ => return Err(format!("Syntax error: '{p}' is out of range 0-{max}")),
                }
            }
            None => (text, None),
        };
        let ip: IpAddr = addr.parse().map_err(|_| {
            format!("Syntax error: cannot parse {text}: not an IP address the lab reads")
        })?;
        if Family::of(&ip) != self.family {
            return Err(format!(
                "Syntax error: {text} is not an {} address (the set is family {})",
                if self.family == Family::Inet {
                    "IPv4"
                } else {
                    "IPv6"
                },
                self.family
            ));
        }
        let len = prefix.unwrap_or(max);
        let net = IpNet::new(ip, len)
            .map_err(|_| format!("Syntax error: '{len}' is out of range 0-{max}"))?
            .trunc();
        match self.kind {
            SetType::HashNet if len == 0 => {
                Err("The value of the CIDR parameter of the IP address is invalid".into())
            }
            SetType::HashNet => Ok(vec![net]),
            SetType::HashIp if len == max => Ok(vec![net]),
            SetType::HashIp => match net {
                IpNet::V4(n) if (1u64 << (32 - len)) <= u64::from(MAX_EXPAND) => {
                    let (lo, hi) = (u32::from(n.network()), u32::from(n.broadcast()));
                    Ok((lo..=hi)
                        .map(|a| IpNet::from(IpAddr::V4(std::net::Ipv4Addr::from(a))))
                        .collect())
                }
                IpNet::V4(_) => Err(format!(
                    "the lab expands a hash:ip CIDR of at most {MAX_EXPAND} addresses, not {text}"
                )),
                IpNet::V6(_) => Err(format!(
                    "Syntax error: plain IP address must be supplied: {text}"
                )),
            },
        }
    }

    fn insert(&mut self, net: IpNet) -> bool {
        let added = self.members.insert(net);
        if added {
            *self.prefixes.entry(net.prefix_len()).or_default() += 1;
        }
        added
    }

    fn remove(&mut self, net: &IpNet) -> bool {
        let removed = self.members.remove(net);
        if removed && let Some(n) = self.prefixes.get_mut(&net.prefix_len()) {
            *n -= 1;
            if *n == 0 {
                self.prefixes.remove(&net.prefix_len());
            }
        }
        removed
    }

    fn clear(&mut self) {
        self.members.clear();
        self.prefixes.clear();
    }
}

/// A node's ipsets, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpSets {
    sets: BTreeMap<String, IpSet>,
}

/// No sets (what [`super::netfilter::XtTable::traverse`] evaluates against).
pub(crate) static NO_SETS: IpSets = IpSets::new();

impl IpSets {
    /// No sets.
    pub const fn new() -> Self {
        IpSets {
            sets: BTreeMap::new(),
        }
    }

    /// The set called `name`.
    pub fn get(&self, name: &str) -> Option<&IpSet> {
        self.sets.get(name)
    }

    /// The sets by name, sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &IpSet)> {
        self.sets.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether the node has no sets.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// `ipset create NAME TYPE family FAMILY maxelem N`. Creating a set that exists with
    /// the same type, family and maxelem succeeds and keeps its members (`-exist`, which is
    /// how a daemon re-asserts its sets); any other existing set is ipset's error. (The
    /// kernel with `-exist` would also accept a different family and keep the old one; the
    /// lab refuses, so the writer's mistake shows.)
    pub fn create(
        &mut self,
        name: &str,
        kind: SetType,
        family: Family,
        maxelem: u32,
    ) -> Result<(), String> {
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("Syntax error: setname {name:?} is not a name"));
        }
        if name.len() > MAX_NAME_LEN {
            return Err(format!(
                "Syntax error: setname '{name}' is longer than {MAX_NAME_LEN} characters"
            ));
        }
        if maxelem == 0 {
            return Err("Syntax error: maxelem 0 is out of range".into());
        }
        match self.sets.get(name) {
            Some(s) if s.kind == kind && s.family == family && s.maxelem == maxelem => Ok(()),
            Some(_) => Err(EXISTS.into()),
            None => {
                self.sets
                    .insert(name.to_string(), IpSet::new(kind, family, maxelem));
                Ok(())
            }
        }
    }

    /// `ipset destroy NAME`. The kernel refuses while a rule references the set, so the
    /// node's tables are passed in.
    pub fn destroy(&mut self, name: &str, rules: &Netfilter) -> Result<(), String> {
        if !self.sets.contains_key(name) {
            return Err(NO_SET.into());
        }
        if rules.references_set(name) {
            return Err(IN_USE.into());
        }
        self.sets.remove(name);
        Ok(())
    }

    fn set_mut(&mut self, name: &str) -> Result<&mut IpSet, String> {
        self.sets.get_mut(name).ok_or_else(|| NO_SET.to_string())
    }

    /// `ipset add [-exist] NAME MEMBER`: an address, or a CIDR (hash:net; an IPv4 hash:ip
    /// adds every address of it). Without `exist`, a member already there is an error.
    pub fn add(&mut self, name: &str, member: &str, exist: bool) -> Result<(), String> {
        let set = self.set_mut(name)?;
        let nets = set.parse_member(member)?;
        if !exist && nets.iter().all(|n| set.members.contains(n)) {
            return Err("Element cannot be added to the set: it's already added".into());
        }
        for n in nets {
            if !set.members.contains(&n) && set.members.len() >= set.maxelem as usize {
                return Err("Hash is full, cannot add more elements".into());
            }
            set.insert(n);
        }
        Ok(())
    }

    /// `ipset del [-exist] NAME MEMBER`. Without `exist`, a member not there is an error.
    pub fn del(&mut self, name: &str, member: &str, exist: bool) -> Result<(), String> {
        let set = self.set_mut(name)?;
        let nets = set.parse_member(member)?;
        if !exist && !nets.iter().any(|n| set.members.contains(n)) {
            return Err("Element cannot be deleted from the set: it's not added".into());
        }
        for n in &nets {
            set.remove(n);
        }
        Ok(())
    }

    /// Make `name` hold exactly `members` (what Felix's `ipset restore` of a whole set
    /// does: flush, then add, or a temporary set swapped in). Every member is checked
    /// first: on an error the set is unchanged. Duplicates are fine.
    pub fn replace_members<I, S>(&mut self, name: &str, members: I) -> Result<(), String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let set = self.set_mut(name)?;
        let mut nets = BTreeSet::new();
        for m in members {
            nets.extend(set.parse_member(m.as_ref())?);
        }
        if nets.len() > set.maxelem as usize {
            return Err("Hash is full, cannot add more elements".into());
        }
        set.clear();
        for n in nets {
            set.insert(n);
        }
        Ok(())
    }

    /// Whether `ip` is in the set `name` (false when there is no such set): exact for
    /// hash:ip, containment for hash:net.
    pub fn contains(&self, name: &str, ip: IpAddr) -> bool {
        self.sets.get(name).is_some_and(|s| s.contains(ip))
    }

    /// The sets as `ipset save` prints them: per set (by name), a `create` line, then one
    /// `add` line per member.
    ///
    /// `initval` is the hash seed the kernel draws at random when the set is created; the
    /// lab derives it from the name (FNV-1a, 32 bits), so the line has ipset v7.17's exact
    /// shape and is the same on every run. `ipset restore` accepts it, so the kernel then
    /// prints the same `create` line. Members: the kernel prints them in hash-bucket order
    /// (which depends on initval); the lab prints them sorted by address, then prefix
    /// length. A full-length prefix (/32, /128) prints as the bare address, as ipset does.
    pub fn to_save_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, s) in &self.sets {
            out.push(format!(
                "create {name} {} family {} hashsize {HASHSIZE} maxelem {} bucketsize {BUCKETSIZE} initval {:#010x}",
                s.kind,
                s.family,
                s.maxelem,
                initval(name)
            ));
            for m in &s.members {
                if m.prefix_len() == m.max_prefix_len() {
                    out.push(format!("add {name} {}", m.addr()));
                } else {
                    out.push(format!("add {name} {m}"));
                }
            }
        }
        out
    }
}

/// A deterministic stand-in for the kernel's random hash seed: FNV-1a of the name.
fn initval(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// ipset v7.17's messages.
const EXISTS: &str = "Set cannot be created: set with the same name already exists";
const NO_SET: &str = "The set with the given name does not exist";
const IN_USE: &str = "Set cannot be destroyed: it is in use by a kernel component";

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("test address")
    }

    fn sets() -> IpSets {
        let mut s = IpSets::new();
        s.create("cali40s:abc", SetType::HashNet, Family::Inet, 1_048_576)
            .expect("new set");
        s.create("hosts", SetType::HashIp, Family::Inet, DEFAULT_MAXELEM)
            .expect("new set");
        s.create("v6", SetType::HashNet, Family::Inet6, DEFAULT_MAXELEM)
            .expect("new set");
        s
    }

    #[test]
    fn hash_net_tests_containment_and_hash_ip_equality() {
        let mut s = sets();
        s.replace_members(
            "cali40s:abc",
            ["10.244.0.0/16", "10.244.1.7", "192.168.5.9/24"],
        )
        .expect("members");
        assert!(s.contains("cali40s:abc", ip("10.244.200.1")));
        assert!(s.contains("cali40s:abc", ip("10.244.1.7")));
        // The host bits of 192.168.5.9/24 are cleared, as the kernel stores it.
        assert!(s.contains("cali40s:abc", ip("192.168.5.200")));
        assert!(!s.contains("cali40s:abc", ip("10.245.0.1")));
        assert!(!s.contains("cali40s:abc", ip("fd00::1")));
        s.add("hosts", "10.0.0.1", false).expect("add");
        assert!(s.contains("hosts", ip("10.0.0.1")));
        assert!(!s.contains("hosts", ip("10.0.0.2")));
        // An IPv4 CIDR in hash:ip adds every address in it.
        s.add("hosts", "10.1.0.0/30", false).expect("add a range");
        assert_eq!(s.get("hosts").map(IpSet::len), Some(5));
        assert!(s.contains("hosts", ip("10.1.0.3")));
        s.add("v6", "fd00:10::/64", false).expect("add");
        assert!(s.contains("v6", ip("fd00:10::5")));
        assert!(!s.contains("v6", ip("10.0.0.1")));
        assert!(!s.contains("nosuch", ip("10.0.0.1")));
        // Deleting the /16 leaves the /32 and the /24: lookups still use the prefixes left.
        s.del("cali40s:abc", "10.244.0.0/16", false).expect("del");
        assert!(!s.contains("cali40s:abc", ip("10.244.200.1")));
        assert!(s.contains("cali40s:abc", ip("10.244.1.7")));
    }

    #[test]
    fn errors_are_ipset_s() {
        let mut s = sets();
        assert_eq!(
            s.create("hosts", SetType::HashNet, Family::Inet, DEFAULT_MAXELEM),
            Err(EXISTS.to_string())
        );
        assert_eq!(
            s.create("hosts", SetType::HashIp, Family::Inet, DEFAULT_MAXELEM),
            Ok(())
        );
        assert!(SetType::from_name("hash:net,port").is_err_and(|e| e.contains("hash:net only")));
        assert_eq!(
            SetType::from_name("hash:foo"),
            Err("Syntax error: typename 'hash:foo' is unknown".into())
        );
        assert!(
            s.create(&"a".repeat(32), SetType::HashIp, Family::Inet, 1)
                .is_err_and(|e| e.contains("longer than 31"))
        );
        s.add("hosts", "10.0.0.1", false).expect("add");
        assert_eq!(
            s.add("hosts", "10.0.0.1", false),
            Err("Element cannot be added to the set: it's already added".into())
        );
        assert_eq!(s.add("hosts", "10.0.0.1", true), Ok(()));
        assert_eq!(
            s.del("hosts", "10.9.9.9", false),
            Err("Element cannot be deleted from the set: it's not added".into())
        );
        assert_eq!(s.del("hosts", "10.9.9.9", true), Ok(()));
        assert_eq!(s.add("nosuch", "10.0.0.1", false), Err(NO_SET.into()));
        assert_eq!(
            s.add("cali40s:abc", "10.0.0.0/33", false),
            Err("Syntax error: '33' is out of range 0-32".into())
        );
        // ipset checks the prefix against the set's family first.
        assert_eq!(
            s.add("cali40s:abc", "fd00::/64", false),
            Err("Syntax error: '64' is out of range 0-32".into())
        );
        assert!(
            s.add("cali40s:abc", "fd00::1", false)
                .is_err_and(|e| e.contains("family inet"))
        );
        assert!(
            s.add("cali40s:abc", "0.0.0.0/0", false)
                .is_err_and(|e| e.contains("CIDR parameter"))
        );
        // A bad member leaves the set as it was.
        s.replace_members("hosts", ["10.0.0.7"]).expect("replace");
        assert!(s.replace_members("hosts", ["10.0.0.8", "bogus"]).is_err());
        assert!(s.contains("hosts", ip("10.0.0.7")));
        assert!(!s.contains("hosts", ip("10.0.0.8")));
        // maxelem.
        s.create("small", SetType::HashIp, Family::Inet, 2)
            .expect("new");
        s.add("small", "1.1.1.1", false).expect("add");
        s.add("small", "1.1.1.2", false).expect("add");
        assert_eq!(
            s.add("small", "1.1.1.3", false),
            Err("Hash is full, cannot add more elements".into())
        );
        // Destroy: missing, in use, then free.
        let mut nf = Netfilter::default();
        assert_eq!(s.destroy("nosuch", &nf), Err(NO_SET.into()));
        nf.ip4
            .filter
            .append_unique("INPUT", "-m set --match-set small src -j DROP");
        assert_eq!(s.destroy("small", &nf), Err(IN_USE.into()));
        nf.ip4
            .filter
            .delete_rule("INPUT", "-m set --match-set small src -j DROP");
        assert_eq!(s.destroy("small", &nf), Ok(()));
        assert!(s.get("small").is_none());
    }

    /// `ipset save`'s shape (ipset v7.17), sets by name, members sorted.
    #[test]
    fn save_lines_have_ipset_s_shape() {
        let mut s = sets();
        s.replace_members(
            "cali40s:abc",
            ["192.168.0.0/16", "10.1.2.3", "10.0.0.0/24", "10.0.0.0/8"],
        )
        .expect("members");
        s.add("v6", "fd00::1", false).expect("add");
        assert_eq!(
            s.to_save_lines(),
            [
                "create cali40s:abc hash:net family inet hashsize 1024 maxelem 1048576 bucketsize 12 initval 0x8a3c6911",
                "add cali40s:abc 10.0.0.0/8",
                "add cali40s:abc 10.0.0.0/24",
                "add cali40s:abc 10.1.2.3",
                "add cali40s:abc 192.168.0.0/16",
                "create hosts hash:ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x29ddeb14",
                "create v6 hash:net family inet6 hashsize 1024 maxelem 65536 bucketsize 12 initval 0x9b4a516d",
                "add v6 fd00::1",
            ]
        );
        assert_eq!(IpSets::new().to_save_lines(), Vec::<String>::new());
    }
}
