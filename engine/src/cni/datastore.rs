//! The cluster datastore as a network's CNI plugins reach it through the kubeconfig its
//! installer writes on each node (`/etc/cni/net.d/calico-kubeconfig`): Calico's IPAM objects
//! in the Kubernetes datastore (KDD) — IPPool, IPAMBlock, BlockAffinity, IPAMHandle — and
//! libcalico-go's IPAM client over them (`lib/ipam/ipam.go`, `ipam_block.go`; summarised in
//! `calico-and-cilium.md` §A2).
//!
//! Every node's plugins and calico-node share one [`Datastore`] (one API server); the lab
//! runs one command at a time, so the lock is never contended and the order of writes is
//! the order of the commands.
//!
//! Modelled: the default pool, /26 blocks claimed per node (at most 20), the claim walk,
//! addresses from the front of a block's free list, release to its tail (FIFO reuse, no
//! cooldown: `IPCooldownSeconds` 0), handles `k8s-pod-network.<containerID>`. Simplified:
//! the walk over the pool's blocks starts at a fixed mix of FNV-32(node) modulo the number
//! of blocks (Calico seeds Go's `math/rand` with that hash and draws the start index); claiming is
//! one step (Calico writes a pending affinity, the block, then confirms); no borrowing from
//! other nodes' blocks (Calico does so with `StrictAffinity: false` once every block is
//! claimed).

use ipnet::Ipv4Net;
use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

/// `MaxBlocksPerHost` 0 means 20 (`lib/ipam/ipam.go`).
pub(crate) const MAX_BLOCKS_PER_HOST: usize = 20;

/// An IPPool (`projectcalico.org/v3`), as calico-node creates the default one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpPool {
    /// `default-ipv4-ippool`.
    pub name: String,
    /// `spec.cidr`.
    pub cidr: Ipv4Net,
    /// `spec.blockSize` (26).
    pub block_size: u8,
    /// `spec.natOutgoing`.
    pub nat_outgoing: bool,
}

/// Who holds one address of a block (`attributes[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// `handle_id`: `k8s-pod-network.<containerID>`.
    pub handle: String,
    /// `secondary.namespace`/`secondary.pod`: the pod (`ns/name`), if the plugin said.
    pub pod: String,
    /// `secondary.node`.
    pub node: String,
}

/// An IPAMBlock: a block of the pool, its affinity and who holds each address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpamBlock {
    /// `spec.cidr`.
    pub cidr: Ipv4Net,
    /// `spec.affinity`: `host:<node>`.
    pub affinity: Option<String>,
    /// By ordinal: who holds it (`allocations[]` pointing into `attributes[]`).
    pub allocations: Vec<Option<Allocation>>,
    /// `unallocated[]`: free ordinals, in the order they will be handed out.
    pub unallocated: VecDeque<u32>,
}

impl IpamBlock {
    fn new(cidr: Ipv4Net, node: &str) -> Self {
        let size = 1u32 << (32 - cidr.prefix_len());
        IpamBlock {
            cidr,
            affinity: Some(format!("host:{node}")),
            allocations: vec![None; size as usize],
            unallocated: (0..size).collect(),
        }
    }

    /// The object's name: the CIDR with dashes (`10-244-137-64-26`, `lib/names/cidr.go`).
    pub fn name(&self) -> String {
        cidr_name(self.cidr)
    }

    /// Addresses in use.
    pub fn in_use(&self) -> usize {
        self.allocations.iter().filter(|a| a.is_some()).count()
    }

    /// The address of an ordinal.
    pub fn addr(&self, ordinal: u32) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.cidr.network()).wrapping_add(ordinal))
    }
}

/// A CIDR as Calico names objects after it: `10.244.137.64/26` → `10-244-137-64-26`.
pub(crate) fn cidr_name(cidr: Ipv4Net) -> String {
    format!("{}-{}", cidr.network(), cidr.prefix_len()).replace('.', "-")
}

/// Go's `hash/fnv` New32 (FNV-1, not FNV-1a) of a string.
pub(crate) fn fnv32(s: &str) -> u32 {
    let mut h: u32 = 2_166_136_261;
    for b in s.bytes() {
        h = h.wrapping_mul(16_777_619);
        h ^= u32::from(b);
    }
    h
}

/// A stand-in for Go's `math/rand` seeded with the hash: a fixed mix of the seed, so that
/// nodes with similar names start far apart (splitmix64's finalizer).
fn mix(seed: u32) -> u64 {
    let mut z = u64::from(seed).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Calico's IPAM objects: the pools, the blocks by CIDR, and the addresses each handle holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CalicoIpam {
    /// IPPools.
    pub pools: Vec<IpPool>,
    /// IPAMBlocks by CIDR (the affinity is in the block; BlockAffinity objects follow it).
    pub blocks: BTreeMap<Ipv4Net, IpamBlock>,
    /// IPAMHandles: handle ID → addresses.
    pub handles: BTreeMap<String, Vec<Ipv4Addr>>,
    /// Bumped on every write (watchers compare it, as they would a resourceVersion).
    pub generation: u64,
    /// Bumped when a block is claimed or released (what BIRD exports changes).
    pub blocks_generation: u64,
}

impl CalicoIpam {
    /// The blocks affine to `node`, in the order the BlockAffinity list returns them (by
    /// name: `<node>-<cidrname>`).
    pub(crate) fn blocks_of(&self, node: &str) -> Vec<&IpamBlock> {
        let want = format!("host:{node}");
        let mut v: Vec<&IpamBlock> = self
            .blocks
            .values()
            .filter(|b| b.affinity.as_deref() == Some(want.as_str()))
            .collect();
        v.sort_by_key(|b| b.name());
        v
    }

    /// `AutoAssign` of one IPv4 address for `handle` on `node`: the address and its block.
    pub(crate) fn auto_assign(
        &mut self,
        handle: &str,
        node: &str,
        pod: &str,
    ) -> Result<(Ipv4Addr, Ipv4Net), String> {
        let Some(pool) = self.pools.first().cloned() else {
            return Err(format!("no configured Calico pools for node {node}"));
        };
        let mine: Vec<Ipv4Net> = self.blocks_of(node).iter().map(|b| b.cidr).collect();
        let free = mine.iter().copied().find(|c| {
            self.blocks
                .get(c)
                .is_some_and(|b| !b.unallocated.is_empty())
        });
        let cidr = match free {
            Some(c) => c,
            None => {
                if mine.len() >= MAX_BLOCKS_PER_HOST {
                    return Err(format!(
                        "Need to allocate an IPAM block but could not - limit of {MAX_BLOCKS_PER_HOST} blocks reached for this node"
                    ));
                }
                let c = self.claim_block(&pool, node).ok_or_else(|| {
                    format!(
                        "Assigned 0 out of 1 requested IPv4 addresses; every block of pool {} ({}) is claimed (the lab's calico-ipam does not borrow from other nodes' blocks)",
                        pool.name, pool.cidr
                    )
                })?;
                self.blocks.insert(c, IpamBlock::new(c, node));
                self.blocks_generation += 1;
                c
            }
        };
        let block = self.blocks.get_mut(&cidr).ok_or("the block vanished")?;
        let ord = block
            .unallocated
            .pop_front()
            .ok_or("the block has no free address")?;
        block.allocations[ord as usize] = Some(Allocation {
            handle: handle.to_string(),
            pod: pod.to_string(),
            node: node.to_string(),
        });
        let ip = block.addr(ord);
        self.handles.entry(handle.to_string()).or_default().push(ip);
        self.generation += 1;
        Ok((ip, cidr))
    }

    /// The first block-sized subnet of the pool with no IPAMBlock, walking up from the
    /// node's start index and wrapping.
    fn claim_block(&self, pool: &IpPool, node: &str) -> Option<Ipv4Net> {
        let shift = u32::from(pool.block_size - pool.cidr.prefix_len());
        let count: u64 = 1u64 << shift;
        let start = mix(fnv32(node)) % count;
        let base = u32::from(pool.cidr.network());
        let step = 1u32 << (32 - u32::from(pool.block_size));
        (0..count).map(|i| (start + i) % count).find_map(|i| {
            let net = Ipv4Net::new(
                Ipv4Addr::from(base.wrapping_add((i as u32).wrapping_mul(step))),
                pool.block_size,
            )
            .ok()?;
            (!self.blocks.contains_key(&net)).then_some(net)
        })
    }

    /// `ReleaseByHandle`: free every address the handle holds (nothing if it holds none,
    /// as calico-ipam's DEL ignores a missing handle). Freed ordinals go to the tail of the
    /// free list. True when something was released.
    pub(crate) fn release_by_handle(&mut self, handle: &str) -> bool {
        let Some(ips) = self.handles.remove(handle) else {
            return false;
        };
        for ip in ips {
            if let Some(block) = self.blocks.values_mut().find(|b| b.cidr.contains(&ip)) {
                let ord = u32::from(ip).wrapping_sub(u32::from(block.cidr.network()));
                if let Some(slot) = block.allocations.get_mut(ord as usize) {
                    if slot.take().is_some() {
                        block.unallocated.push_back(ord);
                    }
                }
            }
        }
        self.generation += 1;
        true
    }
}

/// The shared datastore handle (one API server for every node).
#[derive(Clone)]
pub struct Datastore(Arc<Mutex<CalicoIpam>>);

impl Datastore {
    /// A datastore holding these pools.
    pub fn new(pools: Vec<IpPool>) -> Self {
        Datastore(Arc::new(Mutex::new(CalicoIpam {
            pools,
            ..CalicoIpam::default()
        })))
    }

    /// A datastore of its own holding a copy of these objects (cloning the handle shares
    /// them).
    pub fn copy(&self) -> Self {
        Datastore(Arc::new(Mutex::new(self.read(CalicoIpam::clone))))
    }

    /// Read the objects.
    pub fn read<R>(&self, f: impl FnOnce(&CalicoIpam) -> R) -> R {
        let guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    /// Write the objects.
    pub fn write<R>(&self, f: impl FnOnce(&mut CalicoIpam) -> R) -> R {
        let mut guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }
}

impl PartialEq for Datastore {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Datastore {}

impl std::fmt::Debug for Datastore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Datastore(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipam() -> CalicoIpam {
        CalicoIpam {
            pools: vec![IpPool {
                name: "default-ipv4-ippool".into(),
                cidr: "10.244.0.0/16".parse().unwrap(),
                block_size: 26,
                nat_outgoing: true,
            }],
            ..CalicoIpam::default()
        }
    }

    #[test]
    fn fnv1_matches_go() {
        // Go: fnv.New32(); Write([]byte("a")); Sum32() == 0x050c5d7e
        assert_eq!(fnv32("a"), 0x050c_5d7e);
        assert_eq!(fnv32(""), 0x811c_9dc5);
    }

    #[test]
    fn a_node_claims_a_block_hands_out_from_the_front_and_reuses_fifo() {
        let mut d = ipam();
        let (a, block) = d
            .auto_assign("k8s-pod-network.a", "node-1", "default/a")
            .unwrap();
        assert_eq!(block.prefix_len(), 26);
        assert_eq!(
            a,
            block.network(),
            "base+0 first (no tunnel address in BGP mode)"
        );
        let (b, _) = d
            .auto_assign("k8s-pod-network.b", "node-1", "default/b")
            .unwrap();
        assert_eq!(u32::from(b), u32::from(a) + 1);
        assert!(d.release_by_handle("k8s-pod-network.a"));
        assert!(!d.release_by_handle("k8s-pod-network.a"));
        let (c, _) = d
            .auto_assign("k8s-pod-network.c", "node-1", "default/c")
            .unwrap();
        assert_eq!(
            u32::from(c),
            u32::from(a) + 2,
            "the freed address goes to the tail"
        );
        assert_eq!(d.blocks_of("node-1").len(), 1);
        assert_eq!(d.blocks_of("node-1")[0].name(), cidr_name(block));
    }

    #[test]
    fn a_full_block_brings_a_second_one_and_nodes_get_different_blocks() {
        let mut d = ipam();
        for i in 0..65 {
            d.auto_assign(&format!("h{i}"), "node-1", "").unwrap();
        }
        assert_eq!(d.blocks_of("node-1").len(), 2);
        let (_, other) = d.auto_assign("x", "node-2", "").unwrap();
        assert!(d.blocks_of("node-1").iter().all(|b| b.cidr != other));
    }
}
