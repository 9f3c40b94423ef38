//! The command language, defined once. This clap tree drives parsing, `help`, `help
//! COMMAND`, suggestions and (in the REPL) completion. Aliases follow kubectl. The plain
//! lines scripts repeat (`pod create NAME --node N`, …) are read by `super::fast` into the
//! very command this tree gives, for speed; its tests prove the two agree on every line of
//! the repository and on generated lines, and anything else comes here.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// One line of the lab's language.
#[derive(Debug, Parser, Clone, PartialEq)]
#[command(
    multicall = true,
    disable_help_flag = false,
    disable_help_subcommand = true,
    help_template = "{all-args}",
    subcommand_help_heading = "Commands"
)]
pub struct CommandLine {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command.
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum Command {
    /// Add or list nodes
    #[command(subcommand, visible_alias = "no", visible_alias = "nodes")]
    Node(NodeCmd),
    /// Create, delete or list namespaces (with labels, for namespaceSelector)
    #[command(subcommand, name = "ns", visible_alias = "namespace")]
    Ns(NsCmd),
    /// Create, delete or list pods (the kubelet and the runtime do the rest)
    #[command(subcommand, visible_alias = "po", visible_alias = "pods")]
    Pod(PodCmd),
    /// Call the CNI chain directly, as a container runtime would
    #[command(subcommand)]
    Cni(CniCmd),
    /// Create, delete or list StorageClasses
    #[command(subcommand, visible_alias = "storageclass")]
    Sc(ScCmd),
    /// Create, bind, expand, delete or list PersistentVolumeClaims
    #[command(subcommand, visible_alias = "claim")]
    Pvc(PvcCmd),
    /// Create, delete or list VolumeSnapshots
    #[command(subcommand, visible_alias = "vs")]
    Snapshot(SnapshotCmd),
    /// Call the CSI driver directly, as a sidecar or kubelet would
    #[command(subcommand)]
    Csi(CsiCmd),
    /// Create, delete or list NetworkPolicies
    #[command(subcommand, visible_alias = "netpol")]
    Policy(PolicyCmd),
    /// Create, delete or list NetworkAttachmentDefinitions (the extra networks Multus attaches)
    #[command(
        subcommand,
        visible_alias = "net-attach-def",
        after_help = "A pod asks for them with `pod create … --networks NAME[@IFNAME],…`; Multus (`network multus on`)\nreads them when the pod's sandbox is created.\nExamples:\n  nad create blue --config '{\"cniVersion\":\"1.0.0\",\"type\":\"bridge\",\"bridge\":\"br-blue\",\"ipam\":{\"type\":\"host-local\",\"subnet\":\"10.10.0.0/24\"}}'\n  nad create sriov-net --file sriov.json --resource intel.com/sriov_netdevice\n  nad list\n  describe net-attach-def blue"
    )]
    Nad(NadCmd),
    /// Would traffic from SRC reach DST? Answers allowed or denied and which policy decided
    #[command(after_help = "Examples:\n  reach web db --port 3306\n  reach web db --port 53/UDP")]
    Reach(FlowArgs),
    /// Follow a packet hop by hop: eth0 → veth → cni0 → route → node → …
    #[command(
        after_help = "With --step the hops come one at a time, each with the packet as it is there and the entry it\nconsulted (route, rule, policy map, neighbour and FDB): `step` (or Enter) shows the next, `step back`\n(or b) the one before, `step end` (or q) stops. In a script `step` lines right after it step it;\nbefore any other line, or at the end, the rest prints at once.\nExamples:\n  trace app-a app-b\n  trace web db --port 3306\n  trace web db --step"
    )]
    Trace(TraceArgs),
    /// Move through a stepped trace: the next hop, the one before, or the end of stepping
    #[command(
        after_help = "While stepping, an empty line is `step`, `b` or `back` is `step back`, `q` is `step end`.\nExamples:\n  trace web db --step\n  step\n  step back\n  step end"
    )]
    Step {
        /// next (the default), back or end
        #[arg(value_enum, default_value = "next")]
        action: StepAction,
    },
    /// Views: IPAM store, routes, volumes, events (call log), wire log, iptables, ipset, watch
    #[command(subcommand)]
    Show(ShowCmd),
    /// The network implementation: flannel with the host-gw or the VXLAN backend; Multus on top
    #[command(
        subcommand,
        after_help = "Networks:\n  flannel-host-gw  routes to each peer's pod subnet via its InternalIP (the default)\n  flannel-vxlan    flannel.1 (VNI 1, UDP 8472, MTU 1450) tunnels to each peer\nMultus:\n  network multus on|off  Multus (thin) on top of the running network: pods get extra interfaces from NADs\nExamples:\n  network show\n  network use flannel-vxlan\n  network use flannel-host-gw --cidr 10.244.0.0/14\n  network multus on"
    )]
    Network(NetworkCmd),
    /// Print objects (kubectl get)
    #[command(
        after_help = "Examples:\n  get pods\n  get pod web -o json\n  get pod/web -o yaml\n  get pod web db\n  get pod/web pvc/data\n  get nodes -o wide\n  get pods -A\n  get pods -l app=web\n  get pods,pvc -o name\n  get pods -w\n  get pods -l app=web --watch-only --output-watch-events"
    )]
    Get(GetArgs),
    /// Describe objects, with the events of one (kubectl describe)
    #[command(
        after_help = "Each object's events print after it, as kubectl v1.31 prints them (--show-events=false leaves them out).\nExamples:\n  describe pod web\n  describe pods\n  describe pod web db\n  describe pod/web node/node-1\n  describe pod we      (no pod \"we\": the pods whose names start with \"we\")\n  describe pods -l app=web\n  describe pods -A\n  describe pods --show-events=false"
    )]
    Describe(DescribeArgs),
    /// Delete an object, in kubectl's verb order (`delete pod web` is `pod delete web`)
    #[command(
        after_help = "Examples:\n  delete pod web\n  delete pod web db\n  delete pod/web pvc/data\n  delete pods -l app=web\n  delete pvc/data -n team-a\n  delete netpol deny-all"
    )]
    Delete(DeleteArgs),
    /// Create or update objects from a Kubernetes manifest (kubectl apply -f)
    #[command(
        after_help = "YAML or JSON, documents separated by ---, or a List\nFrom a here-document (scripts and the REPL): `apply -f - <<EOF`, the manifest, then a line `EOF`\nExamples:\n  apply -f pod.yaml\n  apply -f team-a.yaml -n team-a\n  delete -f pod.yaml"
    )]
    Apply(ApplyArgs),
    /// Add, change or remove labels of a pod, node or namespace (kubectl label)
    #[command(
        after_help = "Examples:\n  label pod web tier=frontend\n  label pod web app=api --overwrite\n  label pod web tier-\n  label ns team-a team=a\n  label pod web tier=x --resource-version 12   (a stale version is a Conflict)"
    )]
    Label(LabelArgs),
    /// Mark a node unschedulable: the scheduler places no new pod there (kubectl cordon)
    #[command(after_help = "Examples:\n  cordon node-2\n  uncordon node-2")]
    Cordon {
        /// Node name
        node: String,
    },
    /// Cordon a node and evict its pods (kubectl drain); a pod that declares no controller
    /// (every pod the lab makes) is evicted only with --force
    #[command(
        after_help = "Examples:\n  drain node-2 --force\n  drain node-2 --ignore-daemonsets --force\n  uncordon node-2"
    )]
    Drain {
        /// Node name
        node: String,
        /// Also evict pods that declare no controller (no ReplicaSet, Job, StatefulSet…)
        #[arg(long)]
        force: bool,
        /// Accepted as kubectl takes it: the lab runs no DaemonSet pods (its network and CSI
        /// node plugins are not pods here)
        #[arg(long)]
        ignore_daemonsets: bool,
        /// Accepted as kubectl takes it: the lab's pods have no emptyDir volumes
        #[arg(long)]
        delete_emptydir_data: bool,
    },
    /// Let the scheduler place pods on a node again (kubectl uncordon)
    #[command(after_help = "Example:\n  uncordon node-2")]
    Uncordon {
        /// Node name
        node: String,
    },
    /// Make a CNI plugin or a CSI RPC fail, crash a component mid-operation, or lose a node
    #[command(
        subcommand,
        after_help = "Examples:\n  fault inject bridge --code 11\n  fault inject CreateVolume --code UNAVAILABLE --times 2\n  fault inject kubelet-after-stage --node node-1\n  fault inject node-down --node node-2\n  fault list\n  fault clear all"
    )]
    Fault(FaultCmd),
    /// Advance the logical clock (seconds, or a duration); retries whose backoff expired run
    #[command(
        after_help = "DURATION is whole seconds (10) or a number with a unit: 500ms, 2s, 1.5s, 1m, 1m30s, 1h.\nThe clock steps in milliseconds: kubelet retries a failed mount after 500ms, then 1s, 2s, …\nup to 2m2s; the sidecars after 1s, 2s, … up to 5m; a failed pod sync after 10s. Inside a\ntick every retry fires at its own time, earliest first (at most 10,000 a tick).\nExamples:\n  tick\n  tick 10\n  tick 500ms\n  tick 1m"
    )]
    Tick {
        /// How far to advance: seconds (10) or a duration (500ms, 2s, 1m)
        #[arg(
            value_name = "DURATION",
            default_value = "1",
            allow_negative_numbers = true,
            value_parser = crate::util::time::parse_tick
        )]
        duration: crate::util::time::Millis,
    },
    /// auto: control loops run after every command; step: nothing acts until `reconcile`
    Mode {
        /// auto or step
        #[arg(value_enum)]
        mode: ModeArg,
    },
    /// Run the control loops now: all of them until nothing changes, or one controller once
    #[command(
        after_help = "Controllers: scheduler, provisioner, binder, attachdetach, attacher, resizer, snapshotter, kubelet\nExamples (in step mode, one hop at a time):\n  mode step\n  reconcile binder\n  reconcile provisioner\n  reconcile binder\n  reconcile attachdetach\n  reconcile attacher\n  reconcile kubelet --node node-1\n  reconcile"
    )]
    Reconcile {
        /// Run only this controller, one pass
        #[arg(value_enum)]
        controller: Option<ControllerArg>,
        /// With `kubelet`: only this node's kubelet (no other controller runs per node)
        #[arg(long)]
        node: Option<String>,
    },
    /// The events: every command that changed the lab, numbered from 1, with the clock
    #[command(
        after_help = "An event is a command that changed (or may have changed) the lab, one that failed after\nchanging it included; views (`get`, `show`, `describe`, `trace`, `reach`, …) and rejected\ncommands (failed, nothing changed) are not events.\nExamples:\n  timeline\n  rewind 3"
    )]
    Timeline,
    /// Make the lab as it was after event N (0 is the start); `--undo` returns to the present
    #[command(
        visible_alias = "at",
        after_help = "Every view answers as of then. A command that changes the lab forks the session there:\nthe later events are dropped. Until then `rewind --undo` brings them back. -K is K events\nbefore the one the lab is after.\nExamples:\n  rewind 3\n  at 0\n  rewind -1\n  rewind --undo"
    )]
    Rewind(RewindArgs),
    /// What changed between two moments: pods, leases, routes, iptables rules, volumes, claims
    #[command(
        after_help = "N and M are event numbers (see `timeline`; 0 is the start); -K is K events before the one the lab\nis after, and M left out is where the lab is.\nExamples:\n  diff 0 3\n  diff 2 5\n  diff -1"
    )]
    Diff(DiffArgs),
    /// Where a piece of state came from, back to the command that made it
    #[command(
        subcommand,
        after_help = "Examples:\n  why route 10.244.2.0/24 --node node-1\n  why lease 10.244.1.2 --node node-1\n  why pv pvc-76511e8b-8bbc-8416-e4c3-3d1effb0f211\n  why va csi-2a92d2391c4c\n  why rule CNI-HOSTPORT-DNAT 1 --node node-1\n  why identity 45927"
    )]
    Why(WhyCmd),
    /// Start over with the default cluster
    Reset(ResetArgs),
    /// Play a script for a class: its `# comments` as captions, each command typed out and run, paced
    #[command(
        after_help = "In the REPL and the dashboard the script is typed out live: --step shows each caption, then waits for
Enter before its command (Esc stops in the dashboard, q then Enter in the REPL), --pace waits that long between commands (default 2s). In a
script (`run`), the commands run one after another with their captions. A line starting with `!` is meant
to fail; a command that does not end as written stops the playback.
Examples:
  play assets/demo.lab --step
  play class/vxlan.lab --pace 3s"
    )]
    Play(PlayArgs),
    /// Print text (useful in scripts)
    Echo(EchoArgs),
    /// Save the whole lab (objects, node state, logs) to a versioned JSON file, atomically
    #[command(
        after_help = "The file holds how the lab started, every command that changed it (with any file it read)\nand a snapshot of the state with its digest; `load FILE` replays it.\nExamples:\n  save lab.json\n  save /tmp/before-upgrade.json"
    )]
    Save(FileArgs),
    /// Replace the lab with a saved one; a damaged or newer file is refused and nothing changes
    #[command(
        after_help = "The save is replayed on a fresh lab and checked against its snapshot before it replaces\nthe current lab. A lesson in progress is left (its progress is kept). From the shell,\n`cni-csi-lab --load lab.json` starts from a save.\nExamples:\n  load lab.json\n  load /tmp/before-upgrade.json"
    )]
    Load(FileArgs),
    /// List the commands, or show one command's usage and examples
    #[command(after_help = "Examples:\n  help\n  help pod create\n  help cni")]
    Help(HelpArgs),
    /// A short concept card (netns, veth, prevResult, …) and where the handbook covers it
    #[command(after_help = "Examples:\n  explain\n  explain veth\n  explain prevResult")]
    Explain(ExplainArgs),
    /// Guided lessons: list, start, play, verify, lint
    #[command(
        subcommand,
        after_help = "Examples:\n  lesson list\n  lesson start ch7-hands-on\n  lesson play ch7-hands-on --speed 2\n  lesson verify"
    )]
    Lesson(LessonCmd),
    /// Lesson: the next hint for the current step (repeat for more)
    Hint,
    /// Lesson: let the lab do the current step (or show a quiz's answer) and move on
    Skip,
    /// Lesson: back to the previous step (the cluster is rebuilt as it was then)
    Back,
}

/// `help` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct HelpArgs {
    /// The command, e.g. `pod create`
    #[arg(value_name = "COMMAND")]
    pub words: Vec<String>,
}

/// `explain` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct ExplainArgs {
    /// The concept (all topics when omitted)
    pub topic: Option<String>,
}

/// `node …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum NodeCmd {
    /// Register a node with its podCIDR and InternalIP
    #[command(
        after_help = "Examples:\n  node add node-3 --cidr 10.244.3.0/24 --ip 192.168.0.3\n  node add edge --cidr 10.250.0.0/28 --ip 192.168.0.9 --zone zone-2\n  node add sriov-1 --sriov-pf ens1f0 --vfs 8"
    )]
    Add {
        /// Node name
        name: String,
        /// The node's podCIDR (default: the next free 10.244.N.0/24)
        #[arg(long)]
        cidr: Option<String>,
        /// The node's InternalIP (default: 192.168.0.N)
        #[arg(long)]
        ip: Option<String>,
        /// topology.kubernetes.io/zone label
        #[arg(long)]
        zone: Option<String>,
        /// An SR-IOV NIC: the PF's netdev name (its VFs are PFv0, PFv1 …; with --vfs)
        #[arg(long, requires = "vfs", value_name = "PF")]
        sriov_pf: Option<String>,
        /// How many VFs the PF has, 1 to 64 (advertised as intel.com/sriov_netdevice)
        #[arg(long, requires = "sriov_pf", value_name = "N")]
        vfs: Option<u32>,
    },
    /// List nodes
    #[command(visible_alias = "ls")]
    List,
}

/// `ns …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum NsCmd {
    /// Create a namespace
    #[command(after_help = "Example:\n  ns create team-a --label team=a")]
    Create {
        /// Namespace name
        name: String,
        /// Label k=v (repeatable)
        #[arg(long = "label", short = 'l')]
        labels: Vec<String>,
    },
    /// Delete an empty namespace
    #[command(visible_alias = "rm")]
    Delete {
        /// Namespace name
        name: String,
    },
    /// List namespaces
    #[command(visible_alias = "ls")]
    List,
}

/// `pod …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum PodCmd {
    /// Create a pod (on --node, or where the scheduler places it); the kubelet creates its sandbox and network
    #[command(
        override_usage = "create [OPTIONS] [--node <NODE>] <NAME>",
        after_help = "Examples:\n  pod create web --node node-1 --label app=web\n  pod create api --node node-2 --port 8080:80\n  pod create slow --node node-1 --bandwidth-ingress 1M --bandwidth-egress 1M\n  pod create dpdk --resource intel.com/sriov_netdevice=1\n  pod create db --pvc data --step"
    )]
    Create(Box<PodCreateArgs>),
    /// Delete a pod; the kubelet tears it down (CNI DEL) before it is gone
    #[command(
        visible_alias = "rm",
        after_help = "Examples:\n  pod delete web\n  pod delete db --step      # its CSI teardown, call by call"
    )]
    Delete {
        /// Pod name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
        /// Then show the CSI calls it made one at a time (`step`, `step back`, `step end`)
        #[arg(long)]
        step: bool,
    },
    /// List pods
    #[command(visible_alias = "ls")]
    List {
        /// Namespace (all namespaces when omitted)
        #[arg(long, short = 'n', visible_alias = "namespace")]
        ns: Option<String>,
    },
}

/// `pod create` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct PodCreateArgs {
    /// Pod name
    pub name: String,
    /// The node to run on (spec.nodeName: the scheduler is bypassed and the node's kubelet
    /// admits the pod itself; without it the scheduler picks one)
    #[arg(long)]
    pub node: Option<String>,
    /// A label the node must have, k=v (spec.nodeSelector; repeatable), e.g.
    /// kubernetes.io/hostname=node-2
    #[arg(long = "node-selector", value_name = "KEY=VALUE")]
    pub node_selector: Vec<String>,
    /// An extended resource the container requests (requests = limits; repeatable),
    /// e.g. intel.com/sriov_netdevice=1
    #[arg(long = "resource", value_name = "NAME=COUNT")]
    pub resources: Vec<String>,
    /// Label k=v (repeatable)
    #[arg(long = "label", short = 'l')]
    pub labels: Vec<String>,
    /// Host port mapping HOST:CONTAINER[/PROTO] (repeatable)
    #[arg(long = "port", short = 'p')]
    pub ports: Vec<String>,
    /// Ingress bandwidth limit (kubernetes.io/ingress-bandwidth), e.g. 10M
    #[arg(long, allow_hyphen_values = true, value_parser = quantity_text)]
    pub bandwidth_ingress: Option<String>,
    /// Egress bandwidth limit (kubernetes.io/egress-bandwidth), e.g. 10M
    #[arg(long, allow_hyphen_values = true, value_parser = quantity_text)]
    pub bandwidth_egress: Option<String>,
    /// A PersistentVolumeClaim the container mounts at /mnt/CLAIM (a Block claim: the device /dev/CLAIM), CLAIM[:ro] (repeatable)
    #[arg(long = "pvc")]
    pub pvcs: Vec<String>,
    /// Extra networks for Multus (k8s.v1.cni.cncf.io/networks): `a@net1,ns/b` or the JSON list form
    #[arg(long, value_name = "VALUE", allow_hyphen_values = true)]
    pub networks: Option<String>,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
    /// Then show the CSI calls it made one at a time (`step`, `step back`, `step end`)
    #[arg(long)]
    pub step: bool,
}

/// `cni …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum CniCmd {
    /// ADD: run the chain for a container (prints the result JSON or the CNI error JSON)
    #[command(
        after_help = "Examples:\n  cni add c1 --node node-1\n  cni add c2 --node node-1 --args 'IgnoreUnknown=1;IP=10.244.1.50'\n  cni add c3 --node node-1 --ifname net1"
    )]
    Add(CniAttachArgs),
    /// DEL: run the chain in reverse with the cached result (prints nothing on success)
    Del(CniAttachArgs),
    /// CHECK: verify an attachment against its cached result
    Check(CniAttachArgs),
    /// GC: delete cached attachments of containers that no longer exist, then GC each plugin
    Gc {
        /// Node
        #[arg(long)]
        node: String,
    },
    /// STATUS: can the plugins serve ADD?
    Status {
        /// Node
        #[arg(long)]
        node: String,
    },
    /// Show or choose the release of containernetworking/plugins in every node's
    /// /opt/cni/bin: 1.9.1 (the current upstream release, the default) or 1.1.1 (Debian
    /// bookworm's build: spec up to 1.0.0, no GC or STATUS)
    #[command(after_help = "Examples:\n  cni plugins\n  cni plugins 1.1.1\n  cni plugins 1.9.1")]
    Plugins {
        /// The release to install (omit to show the one installed)
        #[arg(value_parser = plugins_releases())]
        release: Option<String>,
    },
    /// VERSION of each plugin in the chain
    Version {
        /// Node (default: the first node)
        #[arg(long)]
        node: Option<String>,
    },
    /// Show or load network configs in /etc/cni/net.d
    #[command(subcommand)]
    Conf(CniConfCmd),
}

/// Arguments naming one attachment.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct CniAttachArgs {
    /// Container ID (CNI_CONTAINERID)
    pub container: String,
    /// Node whose plugins run
    #[arg(long)]
    pub node: String,
    /// CNI_IFNAME
    #[arg(long, default_value = "eth0")]
    pub ifname: String,
    /// CNI_NETNS (default: /var/run/netns/CONTAINER, which the lab creates on ADD; any other
    /// path must exist already, e.g. another container's)
    #[arg(long)]
    pub netns: Option<String>,
    /// CNI_ARGS, K=V;K2=V2
    #[arg(long)]
    pub args: Option<String>,
}

/// `cni conf …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum CniConfCmd {
    /// Show /etc/cni/net.d and the config the runtime uses (first in lexical order)
    Show {
        /// Node (default: the first node)
        #[arg(long)]
        node: Option<String>,
    },
    /// Copy a conflist file into /etc/cni/net.d ({{.PodCIDR}} is filled per node)
    Load {
        /// The file (.conflist, .conf or .json)
        #[arg(value_parser = file_name)]
        file: String,
        /// Only this node
        #[arg(long, conflicts_with = "all")]
        node: Option<String>,
        /// Every node (also what happens without --node)
        #[arg(long)]
        all: bool,
        /// Name in net.d (default: the file's name)
        #[arg(long = "as")]
        as_name: Option<String>,
        /// Write the bytes even if they do not parse, as `cp` would (containerd then fails
        /// to load net.d when the file sorts first, and the node's pods get no network)
        #[arg(long)]
        as_is: bool,
    },
    /// Delete a file from /etc/cni/net.d (`rm /etc/cni/net.d/NAME`): the runtime then loads
    /// the next file in lexical order
    #[command(visible_alias = "rm")]
    Remove {
        /// The file's name in net.d (`01-minimal.conflist`)
        name: String,
        /// Only this node (default: every node)
        #[arg(long)]
        node: Option<String>,
    },
}

/// `nad …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum NadCmd {
    /// Create a NetworkAttachmentDefinition (spec.config is stored as given)
    #[command(
        after_help = "Examples:\n  nad create blue --config '{\"cniVersion\":\"1.0.0\",\"type\":\"bridge\",\"bridge\":\"br-blue\",\"ipam\":{\"type\":\"host-local\",\"subnet\":\"10.10.0.0/24\"}}'\n  nad create sriov-net --file sriov.json --resource intel.com/sriov_netdevice -n team-a"
    )]
    Create(NadCreateArgs),
    /// Delete a NetworkAttachmentDefinition (pods already attached keep their interfaces)
    #[command(visible_alias = "rm")]
    Delete {
        /// Name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// List NetworkAttachmentDefinitions
    #[command(visible_alias = "ls")]
    List {
        /// Namespace (all namespaces when omitted)
        #[arg(long, short = 'n', visible_alias = "namespace")]
        ns: Option<String>,
    },
}

/// `nad create` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct NadCreateArgs {
    /// Name
    pub name: String,
    /// spec.config: a CNI config or conflist as JSON text (empty: Multus looks in its confDir)
    #[arg(long, allow_hyphen_values = true, conflicts_with = "file")]
    pub config: Option<String>,
    /// Read spec.config from a file
    #[arg(long, value_parser = file_name)]
    pub file: Option<String>,
    /// The device-plugin resource (k8s.v1.cni.cncf.io/resourceName), e.g. intel.com/sriov_netdevice
    #[arg(long)]
    pub resource: Option<String>,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
}

/// `policy …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum PolicyCmd {
    /// Create a NetworkPolicy
    #[command(
        after_help = "Examples:\n  policy create db-allow-web --select app=db --ingress-from app=web --port 3306\n  policy create deny-all --select '' --types Ingress"
    )]
    Create(PolicyCreateArgs),
    /// Delete a NetworkPolicy
    #[command(visible_alias = "rm")]
    Delete {
        /// Policy name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// List NetworkPolicies
    #[command(visible_alias = "ls")]
    List,
}

/// `policy create` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct PolicyCreateArgs {
    /// Policy name
    pub name: String,
    /// podSelector k=v[,k2=v2] ('' selects every pod in the namespace)
    #[arg(long)]
    pub select: String,
    /// An ingress peer: pods matching k=v[,k2=v2] (repeatable); `ns:k=v` for a namespaceSelector
    #[arg(long = "ingress-from")]
    pub ingress_from: Vec<String>,
    /// An egress peer: pods matching k=v (repeatable); `ns:k=v` for a namespaceSelector
    #[arg(long = "egress-to")]
    pub egress_to: Vec<String>,
    /// Allowed port P[/PROTO] or P-END[/PROTO] (repeatable; applies to every rule)
    #[arg(long = "port")]
    pub ports: Vec<String>,
    /// policyTypes, e.g. Ingress,Egress (default: Ingress, plus Egress if --egress-to is given)
    #[arg(long)]
    pub types: Option<String>,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
}

/// `reach` / `trace` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct FlowArgs {
    /// Source pod (ns/name or name)
    pub src: String,
    /// Destination pod, node or IP
    pub dst: String,
    /// Destination port P[/PROTO] (default 80/TCP)
    #[arg(long)]
    pub port: Option<String>,
    /// The IP packet's size in bytes, DF set (default 84, `ping`'s; `ping -s N` is N+28)
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(28..=65535))]
    pub size: Option<u32>,
}

/// `trace` arguments: the flow, and whether to step it hop by hop.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct TraceArgs {
    /// The flow.
    #[command(flatten)]
    pub flow: FlowArgs,
    /// Show the hops one at a time (`step`, `step back`, `step end`)
    #[arg(long)]
    pub step: bool,
}

/// `step …`: where to move in a stepped trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StepAction {
    /// The next hop.
    Next,
    /// The hop before.
    Back,
    /// Stop stepping.
    End,
}

/// `network …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum NetworkCmd {
    /// The network's card: backend, encapsulation, MTU, who masquerades, NetworkPolicy
    Show,
    /// flannel, Calico and Cilium side by side: encapsulation, routing, MTU, IPAM, who
    /// masquerades, who enforces NetworkPolicy and where
    Compare,
    /// Install or remove Multus (thin plugin) on every node, on top of the running network
    #[command(
        after_help = "on:  the thin entrypoint writes /etc/cni/net.d/00-multus.conf[list] (the running network as delegates[0])\n     and multus.d/multus.kubeconfig on every node; pods created from now on go through Multus\noff: both files go; running pods keep their sandboxes\nExamples:\n  network multus on\n  network multus off"
    )]
    Multus {
        /// on or off
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
    /// Run another network: the old one's daemons go with what they programmed
    Use {
        /// flannel-host-gw, flannel-vxlan, calico-bgp or cilium
        #[arg(value_parser = ["flannel-host-gw", "flannel-vxlan", "calico-bgp", "cilium"])]
        name: String,
        /// The cluster CIDR (net-conf.json Network; default 10.244.0.0/16): every node's
        /// podCIDR must lie in it
        #[arg(long, value_name = "CIDR")]
        cidr: Option<String>,
    },
}

/// `show …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum ShowCmd {
    /// host-local's store on a node, as it sits in /var/lib/cni/networks
    Ipam {
        /// Node (default: every node)
        node: Option<String>,
        /// Also the real host-local's files (its dataDir in the lab's data directory;
        /// --real-cni only)
        #[arg(long)]
        real: bool,
    },
    /// Route tables in `ip route` form (node and pod namespaces)
    Routes {
        /// Node (default: every node)
        node: Option<String>,
        /// Only this pod's namespace (NS/NAME or NAME in default)
        #[arg(long)]
        pod: Option<String>,
        /// Also the kernel's own table (`ip route` in the real namespace; --real-cni only)
        #[arg(long)]
        real: bool,
    },
    /// Links in `ip -d link` form: the node's, or a pod's with --pod
    Links {
        /// Node
        node: String,
        /// A pod on that node: its network namespace instead of the host's
        #[arg(long)]
        pod: Option<String>,
    },
    /// BGP on a node under Calico: `calicoctl node status` (the mesh peers and their state)
    /// and `birdcl show route` (blocks learned and exported)
    Bgp {
        /// Node
        node: String,
    },
    /// Cilium's agent on a node: `cilium endpoint list` and `cilium bpf ipcache list`;
    /// a pod's policy map (`cilium bpf policy get`) with --policy, the identities with
    /// --identities
    Bpf {
        /// Node
        node: String,
        /// A pod on that node (NS/NAME or NAME in default): its endpoint's policy map
        #[arg(long, value_name = "POD", conflicts_with = "identities")]
        policy: Option<String>,
        /// `cilium identity list`
        #[arg(long)]
        identities: bool,
    },
    /// The neighbour (ARP) table in `ip neigh` form
    Neigh {
        /// Node
        node: String,
    },
    /// The forwarding database in `bridge fdb` form (VXLAN remote VTEPs)
    Fdb {
        /// Node
        node: String,
    },
    /// The call log: who called what, in order
    Events {
        /// How many of the latest entries
        #[arg(short = 'n', long, default_value_t = 20, allow_negative_numbers = true, value_parser = whole_usize)]
        n: usize,
    },
    /// The wire log: exact CNI env, stdin and stdout of each plugin execution
    Wire {
        /// Show the N-th record (as numbered in the list); the latest when omitted
        #[arg(allow_negative_numbers = true, value_parser = whole_u64)]
        n: Option<u64>,
        /// List the latest records instead of showing one
        #[arg(long)]
        list: bool,
        /// The latest record of this call: a CSI RPC (`ControllerPublishVolume`) or a CNI
        /// command with or without the plugin (`ADD`, `bridge:ADD`)
        #[arg(long, value_name = "CALL", conflicts_with_all = ["n", "list"])]
        last: Option<String>,
        /// With --last: only records of this node
        #[arg(long, requires = "last")]
        node: Option<String>,
        /// Also the real plugin's call: env, stdin, stdout, exit, and how it compares
        /// (--real-cni only)
        #[arg(long, conflicts_with_all = ["list", "last"])]
        real: bool,
    },
    /// Volumes: PVC → PV → volume ID → attachment → staging path → targets, with CSI state
    Volumes {
        /// Node (default: every node)
        node: Option<String>,
    },
    /// iptables rules on a node, as `iptables -t TABLE -S` prints them (portmap, ipMasq,
    /// flannel)
    #[command(
        after_help = "The lab models the nat and filter tables of IPv4 (iptables) and IPv6 (ip6tables).\nExamples:\n  show iptables node-1\n  show iptables node-1 -6\n  show iptables node-1 --table filter"
    )]
    Iptables {
        /// Node
        node: String,
        /// The IPv6 tables (ip6tables)
        #[arg(short = '6', long = "ipv6")]
        v6: bool,
        /// The table
        #[arg(long, short = 't', default_value = "nat", value_parser = TableParser)]
        table: TableArg,
        /// Also the kernel's own rules (`iptables -S` in the node's real namespace;
        /// --real-cni only)
        #[arg(long)]
        real: bool,
    },
    /// ipsets on a node, as `ipset save` prints them (the sets `-m set` rules test)
    #[command(
        after_help = "The lab models hash:ip and hash:net sets of both families; members are listed sorted.\nExample:\n  show ipset node-1"
    )]
    Ipset {
        /// Node
        node: String,
    },
    /// Watch events of the API server since an index
    Watch {
        /// First event index
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole_u64)]
        since: u64,
    },
}

/// The iptables tables `show iptables --table` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableArg {
    /// `-t nat`
    #[default]
    Nat,
    /// `-t filter`
    Filter,
}

impl TableArg {
    /// Both, in the order help lists them.
    pub const ALL: [TableArg; 2] = [TableArg::Nat, TableArg::Filter];

    /// The name `-t` takes.
    pub fn name(self) -> &'static str {
        match self {
            TableArg::Nat => "nat",
            TableArg::Filter => "filter",
        }
    }
}

/// `--table NAME`: nat or filter, refused with what the lab models (raw, mangle and security
/// are not); the names are the flag's possible values, so completion offers them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TableParser;

/// `--table`'s check: the table by name.
fn table_name(text: &str) -> Result<TableArg, String> {
    TableArg::ALL
        .into_iter()
        .find(|t| t.name() == text)
        .ok_or_else(|| "the lab models the nat and filter tables".to_string())
}

impl clap::builder::TypedValueParser for TableParser {
    type Value = TableArg;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<TableArg, clap::Error> {
        let check: fn(&str) -> Result<TableArg, String> = table_name;
        check.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            TableArg::ALL
                .into_iter()
                .map(|t| clap::builder::PossibleValue::new(t.name())),
        ))
    }
}

/// Output formats for `get` (the lab's subset of kubectl's, in kubectl's order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputFormat {
    /// The object(s) as JSON
    Json,
    /// KIND/NAME per object, as kubectl prints the resource (`pod/web`,
    /// `storageclass.storage.k8s.io/standard`)
    Name,
    /// More columns
    Wide,
    /// The object(s) as YAML, as kubectl prints it
    Yaml,
    /// `jsonpath=TEMPLATE`: kubectl's JSONPath template over the JSON (see
    /// `render::jsonpath`), as typed
    JsonPath(String),
    /// `custom-columns=HEADER:PATH,…`, as typed
    CustomColumns(String),
}

impl OutputFormat {
    /// The formats `-o` takes, as help and completion list them.
    const NAMES: [&'static str; 6] = [
        "json",
        "name",
        "wide",
        "yaml",
        "jsonpath=",
        "custom-columns=",
    ];

    /// The format's name as `-o` takes it (`json`, `jsonpath`).
    pub fn name(&self) -> &'static str {
        match self {
            OutputFormat::Json => "json",
            OutputFormat::Name => "name",
            OutputFormat::Wide => "wide",
            OutputFormat::Yaml => "yaml",
            OutputFormat::JsonPath(_) => "jsonpath",
            OutputFormat::CustomColumns(_) => "custom-columns",
        }
    }
}

/// An error in kubectl's own words (`-o`'s printer errors), shown as kubectl shows it:
/// the sentence alone, with no `invalid value … for --output` before it and no usage line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KubectlSays(pub String);

impl std::fmt::Display for KubectlSays {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KubectlSays {}

/// `-o FORMAT`'s check: a format by name, or kubectl's refusal with the ones the lab has.
fn output_format(text: &str) -> Result<OutputFormat, KubectlSays> {
    output_format_text(text).map_err(KubectlSays)
}

/// [`output_format`], its error as text.
fn output_format_text(text: &str) -> Result<OutputFormat, String> {
    let (name, arg) = match text.split_once('=') {
        Some((n, a)) => (n, Some(a)),
        None => (text, None),
    };
    match (name, arg) {
        ("json", None) => Ok(OutputFormat::Json),
        ("name", None) => Ok(OutputFormat::Name),
        ("wide", None) => Ok(OutputFormat::Wide),
        ("yaml", None) => Ok(OutputFormat::Yaml),
        ("jsonpath", None) | ("jsonpath", Some("")) => {
            Err("template format specified but no template given".to_string())
        }
        ("jsonpath", Some(t)) => Ok(OutputFormat::JsonPath(t.to_string())),
        ("custom-columns", None) | ("custom-columns", Some("")) => {
            Err("custom-columns format specified but no custom columns given".to_string())
        }
        ("custom-columns", Some(c)) => Ok(OutputFormat::CustomColumns(c.to_string())),
        // kubectl's sentence (`printers.NoCompatiblePrinterError`), with the formats the lab
        // has, in kubectl's (sorted) order.
        _ => Err(format!(
            "unable to match a printer suitable for the output format {text:?}, allowed formats are: custom-columns,json,jsonpath,name,wide,yaml"
        )),
    }
}

/// `-o FORMAT`: a name, or `jsonpath=`/`custom-columns=` with its template; the names
/// are the flag's possible values, so help and completion offer them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutputParser;

impl clap::builder::TypedValueParser for OutputParser {
    type Value = OutputFormat;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<OutputFormat, clap::Error> {
        let check: fn(&str) -> Result<OutputFormat, KubectlSays> = output_format;
        check.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            OutputFormat::NAMES
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// `get` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct GetArgs {
    /// Kind (nodes, pods, namespaces, networkpolicies…), or kinds joined by commas (pods,nodes)
    pub kind: String,
    /// Names (all when omitted), or KIND/NAME arguments of several kinds
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Output format
    #[arg(short = 'o', long = "output", value_parser = OutputParser)]
    pub output: Option<OutputFormat>,
    /// A LABELS column last (each object's labels, `<none>` when it has none)
    #[arg(long = "show-labels")]
    pub show_labels: bool,
    /// Namespace
    #[arg(long, short = 'n', visible_alias = "namespace")]
    pub ns: Option<String>,
    /// Every namespace (a NAMESPACE column for namespaced kinds)
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Label selector: k=v, k!=v, k, !k, 'k in (a,b)', 'k notin (a)'; a comma ANDs them
    #[arg(short = 'l', long = "selector")]
    pub selector: Option<String>,
    /// Events only: the fields to select by, e.g. involvedObject.name=web,type=Warning
    /// (also involvedObject.kind, involvedObject.namespace, reason, source; =, ==, !=)
    #[arg(long = "field-selector", value_name = "SELECTOR")]
    pub field_selector: Option<String>,
    /// Events only: sort by a field, e.g. .lastTimestamp, .metadata.creationTimestamp,
    /// .reason, .type, .involvedObject.name
    #[arg(long = "sort-by", value_name = "PATH")]
    pub sort_by: Option<String>,
    /// The rows, then every change to them after each later command, one row each, until
    /// Ctrl-C in the REPL, Esc in the dashboard, or the script's end
    #[arg(short = 'w', long = "watch")]
    pub watch: bool,
    /// As --watch, without listing the objects first: only the changes print
    #[arg(long = "watch-only")]
    pub watch_only: bool,
    /// With --watch or --watch-only: an EVENT column first (ADDED, MODIFIED, DELETED; the
    /// first listing's rows are ADDED)
    #[arg(long = "output-watch-events")]
    pub output_watch_events: bool,
}

impl GetArgs {
    /// Whether it starts a watch (`-w` or `--watch-only`).
    pub fn watches(&self) -> bool {
        self.watch || self.watch_only
    }
}

/// `delete KIND NAME`: kubectl's verb order for `pod delete NAME` and the like.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct DeleteArgs {
    /// Kind: pod, pvc, pv, sc, netpol, vs (snapshot), nad, ns
    pub kind: Option<String>,
    /// Names (one or more of that kind)
    pub names: Vec<String>,
    /// Delete the objects of that kind whose labels match, e.g. app=web or 'tier in (a,b)'
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Delete every object of that kind (in the namespace, for a namespaced kind)
    #[arg(long)]
    pub all: bool,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
    /// Delete the objects a manifest names (YAML or JSON)
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: Option<String>,
    /// One pod or claim: then show the CSI calls it made one at a time (`step`, `step
    /// back`, `step end`), as `pod delete NAME --step` and `pvc delete NAME --step` do
    #[arg(long)]
    pub step: bool,
}

/// `apply -f FILE [-n NS]`.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct ApplyArgs {
    /// The manifest: YAML or JSON, several documents separated by ---, or a List
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: Option<String>,
    /// The namespace of objects whose manifest names none (one that names another is refused)
    #[arg(long, short = 'n', visible_alias = "namespace")]
    pub ns: Option<String>,
}

/// `describe` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct DescribeArgs {
    /// Kind
    pub kind: String,
    /// Names (every object of the kind when omitted; one name that matches none is a
    /// prefix), or KIND/NAME arguments of several kinds
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
    /// Every namespace (no names then)
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Describe the objects whose labels match (no names then): k=v, k!=v, k, !k,
    /// 'k in (a,b)'; a comma ANDs them
    #[arg(short = 'l', long = "selector")]
    pub selector: Option<String>,
    /// Print each object's events (true or false; true by default)
    #[arg(
        long = "show-events",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub show_events: Option<bool>,
}

/// `label KIND NAME KEY=VALUE…`.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct LabelArgs {
    /// Kind: pod, node or namespace
    pub kind: String,
    /// Name
    pub name: String,
    /// KEY=VALUE to set, KEY- to remove
    #[arg(required = true)]
    pub labels: Vec<String>,
    /// Change a label that already has another value
    #[arg(long)]
    pub overwrite: bool,
    /// Update only if the object still has this resourceVersion (else a Conflict)
    #[arg(long)]
    pub resource_version: Option<String>,
    /// Namespace (pods)
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
}

/// The control loops `reconcile` can run one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ControllerArg {
    /// The scheduler's volume binding (WaitForFirstConsumer: selected-node)
    Scheduler,
    /// external-provisioner (CreateVolume, DeleteVolume, PV objects)
    Provisioner,
    /// The PV controller (provisioner annotations, binding claims, Released), pvc- and pv-protection
    Binder,
    /// The attach/detach controller (VolumeAttachment objects)
    Attachdetach,
    /// external-attacher (ControllerPublish/Unpublish)
    Attacher,
    /// external-resizer (ControllerExpandVolume)
    Resizer,
    /// snapshot-controller and csi-snapshotter (CreateSnapshot)
    Snapshotter,
    /// kubelet (mounts, sandbox and CNI, containers; teardown)
    Kubelet,
}

/// `mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Reconcile after every command
    Auto,
    /// Only on `reconcile`
    Step,
}

/// `play` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct PlayArgs {
    /// The script
    pub file: String,
    /// Wait for Enter before each command
    #[arg(long, conflicts_with = "pace")]
    pub step: bool,
    /// The pause between commands (default 2s): seconds (3) or a duration (500ms, 2s)
    #[arg(long, value_name = "DURATION", value_parser = crate::util::time::parse_tick)]
    pub pace: Option<crate::util::time::Millis>,
}

/// `reset` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct ResetArgs {
    /// Start with no nodes at all
    #[arg(long)]
    pub empty: bool,
}

/// A moment of the timeline as `rewind` and `diff` take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRef {
    /// After event N (0: the start).
    At(u64),
    /// `-K`: K events before the one the lab is after.
    Back(u64),
}

/// What an event argument accepts, said when it is given something else.
const EVENT_NUMBER: &str = "not an event: give an event number (0 is the start, `timeline` lists them) or -K to count K events back";

/// `N` (an event number) or `-K` (K events back from where the lab is).
fn event_ref(text: &str) -> Result<EventRef, String> {
    match text.strip_prefix('-') {
        Some(k) if k.starts_with(|c: char| c.is_ascii_digit()) => match counted(k, EVENT_NUMBER)? {
            0 => Err("-K counts back from where the lab is: -1 or less".to_string()),
            k => Ok(EventRef::Back(k)),
        },
        _ => counted(text, EVENT_NUMBER).map(EventRef::At),
    }
}

/// What `why rule`'s N accepts, said when it is given something else.
const RULE_NUMBER: &str = "not a rule number: give the rule's place in its chain (1 is the first, as `show iptables NODE` lists them) or the rule itself: `why rule -A CHAIN SPEC… --node NODE`";

/// `why rule CHAIN N`: the rule's number in its chain.
fn rule_number(text: &str) -> Result<u64, String> {
    counted(text, RULE_NUMBER)
}

/// `rewind` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct RewindArgs {
    /// The event to rewind to (0 is the start; -K: K events before where the lab is)
    #[arg(
        value_name = "N",
        required_unless_present = "undo",
        conflicts_with = "undo",
        allow_negative_numbers = true,
        value_parser = event_ref
    )]
    pub event: Option<EventRef>,
    /// Return to where you were before rewinding (until a command changes the lab)
    #[arg(long)]
    pub undo: bool,
}

/// `diff` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct DiffArgs {
    /// The earlier moment (an event number; 0 is the start; -K: K events before where the
    /// lab is)
    #[arg(value_name = "N", allow_negative_numbers = true, value_parser = event_ref)]
    pub from: EventRef,
    /// The later moment (the same forms; where the lab is when left out)
    #[arg(value_name = "M", allow_negative_numbers = true, value_parser = event_ref)]
    pub to: Option<EventRef>,
}

/// `why …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum WhyCmd {
    /// A route in a node's main table (`show routes NODE`)
    Route {
        /// Its destination, as `ip route` prints it (a CIDR, or `default`)
        #[arg(value_name = "CIDR")]
        dst: String,
        /// The node
        #[arg(long)]
        node: String,
    },
    /// A host-local lease file on a node (`show ipam NODE`)
    Lease {
        /// The leased address
        #[arg(value_name = "IP")]
        ip: String,
        /// The node
        #[arg(long)]
        node: String,
    },
    /// A PersistentVolume (`get pv`)
    Pv {
        /// Its name
        name: String,
    },
    /// A VolumeAttachment, by its full or short name (`show volumes`)
    Va {
        /// Its name
        name: String,
    },
    /// An iptables rule on a node, by chain and number as `iptables -t TABLE -L CHAIN
    /// --line-numbers` counts them, or as `iptables -S` prints it (`show iptables NODE`)
    #[command(
        after_help = "Rules are numbered from 1 in each chain, in `iptables -S` order. Or give the rule itself as\n`iptables -S` prints it (`show iptables NODE`): -A CHAIN and its spec, compared as rules, not text.\nExamples:\n  why rule CNI-HOSTPORT-DNAT 1 --node node-1\n  why rule FLANNEL-FWD 2 --node node-1 -t filter\n  why rule -A POSTROUTING -m comment --comment \"flanneld masq\" -j FLANNEL-POSTRTG --node node-1"
    )]
    Rule(WhyRuleArgs),
    /// A Cilium security identity (`show bpf NODE --identities`)
    Identity {
        /// Its number
        #[arg(value_name = "ID")]
        id: String,
    },
}

/// `why rule` arguments: `CHAIN N`, or `-A CHAIN SPEC…` (see [`WhyRuleArgs::rule`]).
#[derive(Debug, Args, Clone, PartialEq)]
pub struct WhyRuleArgs {
    /// The chain
    #[arg(value_name = "CHAIN", required_unless_present = "append")]
    pub chain: Option<String>,
    /// The rule's number in the chain, from 1
    #[arg(
        value_name = "N",
        required_unless_present = "append",
        allow_negative_numbers = true,
        value_parser = rule_number
    )]
    pub number: Option<u64>,
    /// Or the rule as `iptables -S` prints it: -A CHAIN and its spec, to the end of the line
    #[arg(
        short = 'A',
        long = "append",
        value_name = "CHAIN SPEC",
        num_args = 1..,
        action = clap::ArgAction::Set,
        allow_hyphen_values = true,
        conflicts_with_all = ["chain", "number"]
    )]
    pub append: Option<Vec<String>>,
    /// The node
    #[arg(long)]
    pub node: String,
    /// The IPv6 tables (ip6tables)
    #[arg(short = '6', long = "ipv6")]
    pub v6: bool,
    /// The table (as `show iptables`, nat unless given)
    #[arg(long, short = 't', default_value = "nat", value_parser = TableParser)]
    pub table: TableArg,
}

/// Which rule `why rule` asks about.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleRef {
    /// `CHAIN N`: by its number in the chain, from 1.
    Numbered {
        /// The chain.
        chain: String,
        /// Its number.
        number: u64,
    },
    /// `-A CHAIN SPEC…`: by the rule itself, parsed as the lab's iptables parses rules.
    Spec {
        /// The chain.
        chain: String,
        /// The rule after `-A CHAIN`, parsed.
        spec: Box<crate::cni::netfilter::RuleSpec>,
        /// The rule as typed, words joined (for messages).
        text: String,
    },
}

impl WhyRuleArgs {
    /// The rule asked about (clap has made sure one form is given).
    pub fn rule(&self) -> RuleRef {
        match &self.append {
            Some(words) => {
                let chain = words.first().cloned().unwrap_or_default();
                let rest = words.get(1..).unwrap_or_default();
                RuleRef::Spec {
                    chain,
                    spec: Box::new(crate::cni::netfilter::RuleSpec::parse_words(rest)),
                    text: rest.join(" "),
                }
            }
            None => RuleRef::Numbered {
                chain: self.chain.clone().unwrap_or_default(),
                number: self.number.unwrap_or_default(),
            },
        }
    }
}

/// `why rule -A CHAIN SPEC… --node NODE -t TABLE`: `-A` takes every word after it (a rule
/// spec is full of flags), so the lab's own flags typed after the spec (`--node`, `-t`,
/// `--table`, `-6`, `--ipv6`, `-h`, `--help`) are moved before `-A`, where clap reads them.
/// `iptables -S` never prints any of them in a rule.
pub(crate) fn lift_why_rule_flags(words: &mut Vec<String>) {
    if words.get(..2) != Some(&["why".to_string(), "rule".to_string()][..]) {
        return;
    }
    let Some(at) = words.iter().position(|w| w == "-A" || w == "--append") else {
        return;
    };
    let mut lifted = Vec::new();
    let mut i = at + 2;
    while i < words.len() {
        let w = words[i].as_str();
        let with_value = matches!(w, "--node" | "-t" | "--table");
        let alone = matches!(w, "-6" | "--ipv6" | "-h" | "--help")
            || w.starts_with("--node=")
            || w.starts_with("--table=");
        if with_value && i + 1 < words.len() {
            lifted.extend(words.drain(i..i + 2));
        } else if alone {
            lifted.push(words.remove(i));
        } else {
            i += 1;
        }
    }
    words.splice(at..at, lifted);
}

/// `save` / `load` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct FileArgs {
    /// The save file (JSON)
    #[arg(value_parser = file_name)]
    pub file: String,
}

/// `echo` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct EchoArgs {
    /// Words to print
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

/// `sc …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum ScCmd {
    /// Create a StorageClass
    #[command(
        after_help = "Examples:\n  sc create fast --param type=ssd\n  sc create keep --reclaim Retain\n  sc create local --binding WaitForFirstConsumer"
    )]
    Create {
        /// Class name
        name: String,
        /// The CSI driver that provisions it
        #[arg(long, default_value = "hostpath.csi.lab")]
        provisioner: String,
        /// reclaimPolicy: Delete or Retain
        #[arg(long, default_value = "Delete")]
        reclaim: String,
        /// volumeBindingMode: Immediate or WaitForFirstConsumer
        #[arg(long, default_value = "Immediate")]
        binding: String,
        /// A parameter k=v passed to CreateVolume (repeatable)
        #[arg(long = "param")]
        params: Vec<String>,
        /// Forbid expansion (allowVolumeExpansion false)
        #[arg(long)]
        no_expansion: bool,
        /// allowedTopologies: zones, e.g. zone-1,zone-2
        #[arg(long)]
        zones: Option<String>,
        /// Make it the default class
        #[arg(long)]
        default: bool,
    },
    /// Delete a StorageClass
    #[command(visible_alias = "rm")]
    Delete {
        /// Class name
        name: String,
    },
    /// List StorageClasses
    #[command(visible_alias = "ls")]
    List,
}

/// `pvc …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum PvcCmd {
    /// Create a PersistentVolumeClaim
    #[command(
        after_help = "Examples:\n  pvc create data --size 10Gi\n  pvc create shared --size 1Gi --access RWX\n  pvc create local --size 1Gi --class local-wffc\n  pvc create restored --size 10Gi --from-snapshot snap-1\n  pvc create copy --size 10Gi --from-pvc data"
    )]
    Create(PvcCreateArgs),
    /// Run the provisioner and the binder for this claim now (step mode); a claim still Pending shows its latest event
    Bind {
        /// Claim name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// Raise a claim's requested size (external-resizer, then kubelet)
    #[command(after_help = "Example:\n  pvc expand data 20Gi")]
    Expand {
        /// Claim name
        name: String,
        /// New size, e.g. 20Gi
        #[arg(allow_hyphen_values = true, value_parser = size_text)]
        size: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// Delete a claim (it stays Terminating while a pod uses it)
    #[command(
        visible_alias = "rm",
        after_help = "Examples:\n  pvc delete data\n  pvc delete data --step    # DeleteVolume, stepped"
    )]
    Delete {
        /// Claim name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
        /// Then show the CSI calls it made one at a time (`step`, `step back`, `step end`)
        #[arg(long)]
        step: bool,
    },
    /// List claims
    #[command(visible_alias = "ls")]
    List,
}

/// `pvc create` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct PvcCreateArgs {
    /// Claim name
    pub name: String,
    /// Requested size, e.g. 10Gi
    #[arg(long, allow_hyphen_values = true, value_parser = size_text)]
    pub size: String,
    /// Access mode: RWO, ROX, RWX or RWOP (repeatable)
    #[arg(long = "access", default_value = "RWO")]
    pub access: Vec<String>,
    /// StorageClass (default: the default class)
    #[arg(long)]
    pub class: Option<String>,
    /// volumeMode: Filesystem or Block
    #[arg(long, default_value = "Filesystem")]
    pub mode: String,
    /// Restore from this VolumeSnapshot
    #[arg(long, conflicts_with = "from_pvc")]
    pub from_snapshot: Option<String>,
    /// Clone this claim (same namespace; dataSource kind PersistentVolumeClaim)
    #[arg(long)]
    pub from_pvc: Option<String>,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
}

/// `snapshot …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum SnapshotCmd {
    /// Snapshot a claim (snapshot-controller, then csi-snapshotter → CreateSnapshot)
    #[command(after_help = "Example:\n  snapshot create snap-1 --pvc data")]
    Create {
        /// Snapshot name
        name: String,
        /// The claim to snapshot
        #[arg(long)]
        pvc: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// Delete a snapshot (DeleteSnapshot with deletionPolicy Delete)
    #[command(visible_alias = "rm")]
    Delete {
        /// Snapshot name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// List snapshots
    #[command(visible_alias = "ls")]
    List,
}

/// `csi …`: one RPC each, as a sidecar or kubelet sends it.
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum CsiCmd {
    /// Identity.GetPluginInfo
    GetPluginInfo,
    /// Identity.GetPluginCapabilities
    GetPluginCapabilities,
    /// Identity.Probe
    Probe,
    /// Controller.ControllerGetCapabilities
    ControllerGetCapabilities,
    /// Controller.CreateVolume (what external-provisioner sends)
    #[command(
        after_help = "Examples:\n  csi create-volume vol-a --size 10Gi\n  csi create-volume vol-b --size 1Gi --access MULTI_NODE_MULTI_WRITER\n  csi create-volume vol-c --size 10Gi --from-snapshot snap-1a2b3c4d"
    )]
    CreateVolume {
        /// The idempotency name
        name: String,
        /// capacity_range.required_bytes, e.g. 10Gi
        #[arg(long, allow_hyphen_values = true, value_parser = size_text)]
        size: Option<String>,
        /// Access mode (SINGLE_NODE_WRITER, MULTI_NODE_READER_ONLY, … or RWO/ROX/RWX/RWOP)
        #[arg(long, default_value = "SINGLE_NODE_WRITER")]
        access: String,
        /// A block volume instead of a filesystem
        #[arg(long)]
        block: bool,
        /// A parameter k=v (repeatable)
        #[arg(long = "param")]
        params: Vec<String>,
        /// Restore from a snapshot ID
        #[arg(long)]
        from_snapshot: Option<String>,
        /// Clone a volume: its ID, or pvc/NAME for the volume of a bound claim
        #[arg(long)]
        from_volume: Option<String>,
        /// Require the volume to be reachable from this node (accessibility_requirements)
        #[arg(long)]
        node: Option<String>,
    },
    /// Controller.DeleteVolume
    DeleteVolume {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
    },
    /// Controller.ControllerPublishVolume (attach; what external-attacher sends)
    ControllerPublish {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node ID
        #[arg(long)]
        node: String,
        /// Attach read-only
        #[arg(long)]
        readonly: bool,
        /// Access mode
        #[arg(long, default_value = "SINGLE_NODE_WRITER")]
        access: String,
    },
    /// Controller.ControllerUnpublishVolume (detach)
    ControllerUnpublish {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node ID (empty = every node)
        #[arg(long, default_value = "")]
        node: String,
    },
    /// Controller.ValidateVolumeCapabilities
    ValidateVolumeCapabilities {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Access mode to validate
        #[arg(long, default_value = "SINGLE_NODE_WRITER")]
        access: String,
    },
    /// Controller.ListVolumes
    ListVolumes {
        /// max_entries (0 = all; a negative value goes to the driver, which refuses it)
        #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
        max_entries: i32,
        /// starting_token from a previous next_token
        #[arg(long, default_value = "")]
        starting_token: String,
    },
    /// Controller.ControllerGetVolume
    ControllerGetVolume {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
    },
    /// Controller.GetCapacity
    GetCapacity,
    /// Controller.CreateSnapshot
    CreateSnapshot {
        /// The idempotency name
        name: String,
        /// Source volume ID, or pvc/NAME for the volume of a bound claim
        #[arg(long)]
        volume: String,
    },
    /// Controller.DeleteSnapshot
    DeleteSnapshot {
        /// Snapshot ID
        id: String,
    },
    /// Controller.ListSnapshots
    ListSnapshots {
        /// Only this snapshot ID
        #[arg(long, default_value = "")]
        snapshot_id: String,
        /// Only snapshots of this volume
        #[arg(long, default_value = "")]
        source_volume_id: String,
        /// max_entries (0 = all; a negative value goes to the driver, which refuses it)
        #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
        max_entries: i32,
        /// starting_token
        #[arg(long, default_value = "")]
        starting_token: String,
    },
    /// Controller.ControllerExpandVolume
    ControllerExpand {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// New size, e.g. 20Gi
        #[arg(allow_hyphen_values = true, value_parser = size_text)]
        size: String,
    },
    /// Node.NodeStageVolume (format + global mount; what kubelet sends)
    NodeStage {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node whose plugin is called
        #[arg(long)]
        node: String,
        /// staging_target_path (default: kubelet's globalmount path for the volume)
        #[arg(long)]
        staging: Option<String>,
        /// Access mode
        #[arg(long, default_value = "SINGLE_NODE_WRITER")]
        access: String,
    },
    /// Node.NodeUnstageVolume
    NodeUnstage {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node
        #[arg(long)]
        node: String,
        /// staging_target_path (default: kubelet's globalmount path)
        #[arg(long)]
        staging: Option<String>,
    },
    /// Node.NodePublishVolume (bind mount into a pod)
    NodePublish {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node
        #[arg(long)]
        node: String,
        /// target_path
        #[arg(long)]
        target: String,
        /// staging_target_path (default: kubelet's globalmount path; '' for none)
        #[arg(long)]
        staging: Option<String>,
        /// Mount read-only
        #[arg(long)]
        readonly: bool,
        /// Access mode
        #[arg(long, default_value = "SINGLE_NODE_WRITER")]
        access: String,
    },
    /// Node.NodeUnpublishVolume
    NodeUnpublish {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node
        #[arg(long)]
        node: String,
        /// target_path
        #[arg(long)]
        target: String,
    },
    /// Node.NodeExpandVolume
    NodeExpand {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node
        #[arg(long)]
        node: String,
        /// volume_path (a published target)
        #[arg(long)]
        path: String,
        /// New size (default: the volume's size)
        #[arg(long, allow_hyphen_values = true, value_parser = size_text)]
        size: Option<String>,
    },
    /// Node.NodeGetInfo
    NodeGetInfo {
        /// Node
        #[arg(long)]
        node: String,
    },
    /// Node.NodeGetCapabilities
    NodeGetCapabilities {
        /// Node
        #[arg(long)]
        node: String,
    },
    /// Node.NodeGetVolumeStats
    NodeGetVolumeStats {
        /// Volume ID, or pvc/NAME for the volume of a bound claim
        id: String,
        /// Node
        #[arg(long)]
        node: String,
        /// volume_path
        #[arg(long)]
        path: String,
    },
    /// Any RPC with a protojson request, e.g. csi call CreateVolume '{"name":"x"}'
    #[command(
        after_help = "Examples:\n  csi call CreateVolume '{\"name\": \"\"}'\n  csi call /csi.v1.Node/NodeGetInfo '{}' --node node-1"
    )]
    Call {
        /// RPC name (CreateVolume or /csi.v1.Controller/CreateVolume)
        rpc: String,
        /// The request as protojson (csi.proto field names)
        #[arg(default_value = "{}")]
        request: String,
        /// Node plugin for Node RPCs
        #[arg(long)]
        node: Option<String>,
    },
    /// Serve the driver on a gRPC unix socket while this REPL or dashboard runs; every call
    /// that arrives runs as `csi call` and shows here (`csi serve stop` stops it)
    #[command(
        override_usage = "serve --socket <PATH> [--node <NODE>]\n       serve stop\n       serve status",
        after_help = "Examples:\n  csi serve --socket /tmp/csi.sock\n  csi serve --socket /tmp/csi.sock --node node-2\n  csi serve status\n  csi serve stop"
    )]
    Serve {
        /// `stop` to stop serving, `status` to say where it serves
        #[arg(value_parser = ["stop", "status"])]
        action: Option<String>,
        /// The unix socket to listen on
        #[arg(
            long,
            value_name = "PATH",
            required_unless_present = "action",
            conflicts_with = "action"
        )]
        socket: Option<String>,
        /// The node whose node plugin answers the Node service (default: the first node)
        #[arg(long, value_name = "NODE", conflicts_with = "action")]
        node: Option<String>,
    },
}

/// `lesson …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum LessonCmd {
    /// List the lessons with your progress
    #[command(visible_alias = "ls")]
    List,
    /// Start (or resume) a lesson on a fresh cluster
    #[command(
        after_help = "Examples:\n  lesson start ch7-hands-on\n  lesson start ch7-hands-on --variant 12"
    )]
    Start {
        /// Lesson id (see `lesson list`)
        id: String,
        /// Play variant N: other pod names, ports, addresses and fault sites, so each
        /// student has their own answers (0, the default, is the lesson as written;
        /// resuming keeps the variant started)
        #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = whole_u32)]
        variant: Option<u32>,
    },
    /// Show the current step again, with your progress
    Status,
    /// Answer the current quiz: a letter, or your prediction
    Answer {
        /// The answer (with none, the lab says what the current quiz accepts)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// Try the current step again: the cluster is rebuilt as it was when the step began
    Retry,
    /// Start the current lesson over from step 1 on a fresh cluster (clears its progress)
    Reset,
    /// Leave the lesson (progress is kept)
    Stop,
    /// Hand in the lesson in progress: write FILE with every line you typed in it (and the
    /// files they read) and your progress, for a teacher's `cni-csi-lab grade`
    Submit {
        /// The file to write (JSON)
        file: String,
    },
    /// Play a lesson's steps as a demo: text, then each reference command and its output
    Play {
        /// Lesson id
        id: String,
        /// Playback speed (2 = twice as fast; front ends that animate use it)
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = play_speed)]
        speed: f64,
        /// Wait for a key between steps (front ends that animate use it)
        #[arg(long)]
        step: bool,
        /// Play variant N of the lesson (see `lesson start --variant`)
        #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true, value_parser = whole_u32)]
        variant: u32,
    },
    /// Play every step on a fresh cluster and check every check (all lessons, or one)
    Verify {
        /// Lesson id (all when omitted)
        id: Option<String>,
    },
    /// Check the lesson files: format, sections, hints, commands, and that each check is
    /// false before its step and true after
    Lint {
        /// Skip the decoys (an `echo` of the checks' words, a command left out, the
        /// commands failing, the wrong node or pod), which are played against every step
        /// by default: each must leave the step's checks false
        #[arg(long)]
        no_decoys: bool,
    },
}

/// `fault …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum FaultCmd {
    /// Arm a fault; it fires on the next matching calls (counted, never random)
    #[command(
        after_help = "TARGET is one of:\n  a CNI plugin type (bridge, host-local, portmap, bandwidth, loopback): the plugin prints the CNI error JSON with --code (default 11) on ADD (or --command DEL|CHECK); a delegated IPAM call too\n  a CSI RPC (CreateVolume, ControllerPublishVolume, NodeStageVolume, NodePublishVolume, …): the RPC answers the gRPC status --code (name or number, default UNAVAILABLE)\n  a crash point: kubelet-after-stage (kubelet dies between NodeStage and NodePublish), bridge-after-ipam (the bridge plugin is killed after IPAM allocated), containerd-after-ipam (containerd dies mid-ADD: the lease leaks), provisioner-after-create (CreateVolume returned, the PV was never written), attacher-after-publish (ControllerPublish returned, status.attached was never written)\n  node-down --node NODE: the node's kubelet stops acting until `fault clear`\nExamples:\n  fault inject bridge --code 11\n  fault inject host-local --node node-1 --times 3 --code 999\n  fault inject bridge --command DEL\n  fault inject NodePublishVolume --code INTERNAL\n  fault inject CreateVolume --code 14 --times 2\n  fault inject containerd-after-ipam --node node-1\n  fault inject node-down --node node-2"
    )]
    Inject {
        /// A CNI plugin type, a CSI RPC name, a crash point, or node-down
        target: String,
        /// Only on this node (any node when omitted)
        #[arg(long)]
        node: Option<String>,
        /// How many matching calls fail (default 1)
        #[arg(long, allow_negative_numbers = true, value_parser = whole_u32)]
        times: Option<u32>,
        /// CNI code (a number) or gRPC code (a name such as UNAVAILABLE, or a number)
        #[arg(long)]
        code: Option<String>,
        /// For a plugin: the CNI command that fails (ADD, DEL or CHECK; default ADD)
        #[arg(long = "command", value_name = "CMD")]
        cni_command: Option<String>,
    },
    /// List the armed faults
    #[command(visible_alias = "ls")]
    List,
    /// Disarm one fault by number, or all of them (a lost node comes back)
    #[command(after_help = "Examples:\n  fault clear 1\n  fault clear all\n  fault clear")]
    Clear {
        /// The fault number, or `all` (the default)
        id: Option<String>,
    },
}

/// The releases of containernetworking/plugins that `cni plugins` and `--cni-plugins`
/// accept, from [`PluginsRelease::ALL`], each also with a leading `v` (`v1.1.1`, as the
/// tags are named); completion offers the plain ones.
pub fn plugins_releases() -> clap::builder::PossibleValuesParser {
    use crate::cni::release::PluginsRelease;
    clap::builder::PossibleValuesParser::new(
        PluginsRelease::ALL
            .map(|r| clap::builder::PossibleValue::new(r.as_str()).alias(format!("v{r}"))),
    )
}

// ---- values checked while parsing ----
//
// Numbers and sizes allow a leading `-` (clap would take `-1` for a flag and say "unknown
// flag") so that a negative value is refused as what it is: "must be ≥ 0".

/// A whole number of type `T` (at most `max`): `-1` is "must be ≥ 0", a number past the
/// type "too large; the largest is …", other text "not a whole number" with what is
/// accepted (instead of Rust's "invalid digit found in string").
fn whole<T: std::str::FromStr<Err = std::num::ParseIntError>>(
    text: &str,
    max: u64,
) -> Result<T, String> {
    if text
        .strip_prefix('-')
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    {
        return Err("must be ≥ 0".to_string());
    }
    text.parse::<T>().map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => format!("too large; the largest is {max}"),
        std::num::IntErrorKind::Empty => "empty: a whole number is expected (0, 1, 2, …)".into(),
        _ => "not a whole number: digits only (0, 1, 2, …)".into(),
    })
}

/// A whole number that picks one of something the lab lists (an event of `timeline`, a
/// rule of a chain): text that is no number at all is refused with `not_one` (what it is
/// not and what is accepted) instead of Rust's "invalid digit found in string"; `-1` and a
/// number too large as [`whole_u64`] says.
fn counted(text: &str, not_one: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Err(e)
            if matches!(
                e.kind(),
                std::num::IntErrorKind::InvalidDigit | std::num::IntErrorKind::Empty
            ) && !text.starts_with('-') =>
        {
            Err(not_one.to_string())
        }
        _ => whole_u64(text),
    }
}

/// A `u64` argument (`tick SECONDS`, `show wire N`).
pub(crate) fn whole_u64(text: &str) -> Result<u64, String> {
    whole(text, u64::MAX)
}

/// A `usize` argument (`show events -n N`).
pub(crate) fn whole_usize(text: &str) -> Result<usize, String> {
    whole(text, usize::MAX as u64)
}

/// `lesson play --speed X`: a number above 0 (`0`, `-1`, `abc`, `inf` are refused here,
/// as bad usage, with what is accepted).
pub(crate) fn play_speed(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(PLAY_SPEED.to_string()),
    }
}

/// What `lesson play --speed` accepts.
const PLAY_SPEED: &str =
    "expected a number above 0, e.g. 2 for twice as fast or 0.5 for half speed";

/// A `u32` argument (`fault inject --times N`).
pub fn whole_u32(text: &str) -> Result<u32, String> {
    whole(text, u64::from(u32::MAX))
}

/// Text that must not be a flag: allowing hyphen values lets `-1Gi` reach its check, and
/// this keeps `--size --class x` from taking `--class` for the size.
fn not_a_flag(text: &str) -> Result<(), String> {
    let short_flag = text.len() == 2
        && text.starts_with('-')
        && text[1..].starts_with(|c: char| c.is_ascii_alphabetic());
    if text.starts_with("--") || short_flag {
        return Err(format!("needs a value before the flag {text}"));
    }
    Ok(())
}

/// A storage size as typed (`10Gi`, `1.5Gi`, `1e9`; the engine parses it): a negative
/// one is refused here with "must be ≥ 0".
pub(crate) fn size_text(text: &str) -> Result<String, String> {
    not_a_flag(text)?;
    if text
        .strip_prefix('-')
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    {
        return Err("must be ≥ 0 (a size such as 10Gi)".to_string());
    }
    Ok(text.to_string())
}

/// A quantity as typed (bandwidth): a negative one reaches the kubelet's own check.
pub(crate) fn quantity_text(text: &str) -> Result<String, String> {
    not_a_flag(text)?;
    Ok(text.to_string())
}

/// A file name: not empty.
pub fn file_name(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("the file name is empty".to_string());
    }
    Ok(text.to_string())
}

// ---- words rewritten before parsing, and checks after ----

/// kubectl's `KIND/NAME` form: `describe pod/web`, `get pod/web -o json`, `delete
/// pod/web` and `label pod/web k=v` are read as `describe pod web`, `get pod web -o json`,
/// `delete pod web` and `label pod web k=v`.
/// The first argument of `get`, `describe` and `delete` is split, only at a `/` with text
/// on both sides; `get pod/a pod/b` and `delete pod/a pod/b` (every name of one kind in
/// that form, as kubectl takes them) are read as `get pod a b` and `delete pod a b`. Other
/// `get`, `describe` and `delete` arguments with a `/` (`pod/a pvc/b`, `pod/a b`, `pod pod/a`, `a/b/c`)
/// stay as typed: the engine reads them by kubectl's rules for the resource/name form
/// (several kinds, or its errors).
pub(crate) fn split_kind_name(words: &mut Vec<String>) {
    if matches!(
        words.first().map(String::as_str),
        Some("delete" | "get" | "describe")
    ) && !one_kind_named_throughout(words)
    {
        return;
    }
    let first = split_first_kind_name(words);
    if let Some((at, kind)) = first
        && matches!(
            words.first().map(String::as_str),
            Some("delete" | "get" | "describe")
        )
    {
        join_more_of_kind(words, at + 2, &kind);
    }
}

/// `label pod/ k=v` (a `/` with nothing on one side of it, where `label` takes a KIND or
/// KIND/NAME first): kubectl's error for it, where clap would only say a word is missing.
/// `get`, `describe` and `delete` read such words themselves, with the same error.
pub(crate) fn broken_kind_name(words: &[String]) -> Option<&'static str> {
    if words.first().map(String::as_str) != Some("label") {
        return None;
    }
    let first = words[1..]
        .iter()
        .take_while(|w| *w != "--")
        .find(|w| !w.starts_with('-'))?;
    let (kind, name) = first.split_once('/')?;
    (kind.is_empty() || name.is_empty())
        .then_some("arguments in resource/name form must have a single resource and name")
}

/// `delete pod/a pod/b`: after the split first word (`pod a`, ending before `from`), every
/// later argument of the form `KIND/NAME` with the same kind becomes its name alone, if all
/// of them are so; otherwise the words stay as typed (and the kind/name text is not found).
fn join_more_of_kind(words: &mut [String], from: usize, kind: &str) {
    let rest: Vec<usize> = (from..words.len())
        .take_while(|&i| words[i] != "--")
        .filter(|&i| !words[i].starts_with('-') && (i == 0 || !takes_value(&words[i - 1])))
        .collect();
    let same_kind = |w: &str| {
        w.split_once('/')
            .is_some_and(|(k, n)| k == kind && !n.is_empty())
    };
    if rest.iter().all(|&i| same_kind(&words[i])) {
        for i in rest {
            let name = words[i][kind.len() + 1..].to_string();
            words[i] = name;
        }
    }
}

/// Whether `delete`'s (or `get`'s) arguments are all of the form `KIND/NAME` with one and the same kind
/// (or none has a `/`): the shape that reads as `delete KIND NAME…`.
fn one_kind_named_throughout(words: &[String]) -> bool {
    let args: Vec<&str> = (1..words.len())
        .take_while(|&i| words[i] != "--")
        .filter(|&i| !words[i].starts_with('-') && !takes_value(&words[i - 1]))
        .map(|i| words[i].as_str())
        .collect();
    if !args.iter().any(|a| a.contains('/')) {
        return true;
    }
    let kind_of = |a: &str| match a.split('/').collect::<Vec<_>>()[..] {
        [kind, name] if !kind.is_empty() && !name.is_empty() && !kind.contains(',') => {
            Some(kind.to_string())
        }
        _ => None,
    };
    let first = kind_of(args[0]);
    first.is_some() && args.iter().all(|a| kind_of(a) == first)
}

/// Options of `get`, `describe` and `delete` whose value is the next word.
fn takes_value(w: &str) -> bool {
    matches!(
        w,
        "-n" | "--ns"
            | "--namespace"
            | "-o"
            | "--output"
            | "-l"
            | "--selector"
            | "-f"
            | "--filename"
    )
}

/// Split the first `KIND/NAME` argument; returns its index and the kind when it did.
fn split_first_kind_name(words: &mut Vec<String>) -> Option<(usize, String)> {
    if !matches!(
        words.first().map(String::as_str),
        Some("get" | "describe" | "delete" | "label")
    ) {
        return None;
    }
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        if w == "--" {
            return None;
        }
        if takes_value(w) {
            i += 2;
            continue;
        }
        if w.starts_with('-') {
            i += 1;
            continue;
        }
        if let Some((kind, name)) = w.split_once('/') {
            if !kind.is_empty() && !name.is_empty() {
                let (kind, name) = (kind.to_string(), name.to_string());
                words[i] = kind.clone();
                words.insert(i + 1, name);
                return Some((i, kind));
            }
        }
        return None;
    }
    None
}

/// Checks clap cannot express: a flag that applies only with some value of an argument.
pub fn check(cmd: &Command) -> Result<(), String> {
    if let Command::Reconcile {
        controller,
        node: Some(_),
    } = cmd
    {
        if *controller != Some(ControllerArg::Kubelet) {
            let what = match controller {
                Some(c) => format!(
                    "\"reconcile {}\"",
                    c.to_possible_value()
                        .map(|v| v.get_name().to_string())
                        .unwrap_or_default()
                ),
                None => "\"reconcile\" (every controller)".to_string(),
            };
            return Err(format!(
                "--node does not apply to {what}: only the kubelet runs per node (`reconcile kubelet --node NODE`); the other controllers act for the whole cluster\n{}",
                super::help::usage_block(&super::help::walk(&["reconcile".to_string()]).0)
            ));
        }
    }
    Ok(())
}
