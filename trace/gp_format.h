/*
 * trace/gp_format.h — the gpuphase record layout: the one contract shared by
 * the capture side (libgpuphase/, which fills records), the collector (which
 * moves them through rings to disk, byte for byte) and the report (which
 * reads them back through gp_reader.h).
 *
 * Every record is exactly GP_REC_SIZE (32) bytes, little-endian, naturally
 * aligned, in ring slots and in the file alike. A record whose payload does not
 * fit (a long string, a deep call stack) is followed by raw continuation slots
 * that carry no type byte; the head record says how many follow (see
 * gp_rec_slots()), and producers push head + continuations as one unit, so a
 * reader never sees a torn group. docs/format.md explains the size choice.
 *
 * Times are nanoseconds on the trace clock named in the file header
 * (CLOCK_MONOTONIC_RAW unless the header says otherwise).
 *
 * Rules for changing this file: add record types and use pad fields; never
 * reorder or resize a field of an existing type without bumping
 * GP_FORMAT_VERSION. Every struct has a _Static_assert on its size.
 */
#ifndef GP_FORMAT_H
#define GP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define GP_REC_SIZE 32u

/* Record types: the first byte of every head record. 0 is never valid. */
enum gp_rec_type {
	GP_REC_INVALID = 0,
	GP_REC_STRING = 1,      /* struct gp_rec_string  (+ continuation)   */
	GP_REC_HOOK_API = 2,    /* struct gp_rec_api: a hooked runtime call  */
	GP_REC_RUNTIME_API = 3, /* struct gp_rec_api: CUPTI RUNTIME record   */
	GP_REC_DRIVER_API = 4,  /* struct gp_rec_api: CUPTI DRIVER record    */
	GP_REC_KERNEL = 5,      /* struct gp_rec_kernel                      */
	GP_REC_MEMCPY = 6,      /* struct gp_rec_copy                        */
	GP_REC_MEMSET = 7,      /* struct gp_rec_copy (copy_kind = 0)        */
	GP_REC_SYNC = 8,        /* struct gp_rec_sync: CUPTI SYNCHRONIZATION */
	GP_REC_EXTCORR = 9,     /* struct gp_rec_extcorr                     */
	GP_REC_MARKER = 10,     /* struct gp_rec_marker: NVTX range/mark     */
	GP_REC_GRAPH_NODE = 11, /* struct gp_rec_graph: graph ids of an op   */
	GP_REC_STACK = 12,      /* struct gp_rec_stack   (+ continuation)    */
	GP_REC_STACK_REF = 13,  /* struct gp_rec_stack_ref                   */
	GP_REC_SYMBOL = 14,     /* struct gp_rec_symbol: pc -> string        */
	GP_REC_ITER = 15,       /* struct gp_rec_mark: iteration boundary    */
	GP_REC_WINDOW = 16,     /* struct gp_rec_mark: capture window edge   */
	GP_REC_THREAD = 17,     /* struct gp_rec_thread: thread metadata     */
	GP_REC_API_NAME = 18,   /* struct gp_rec_api_name: api id -> string  */
	GP_REC_DROPS = 19,      /* struct gp_rec_drops: drop counters        */
	GP_REC_STATUS = 20,     /* struct gp_rec_status: mode / degradation  */
	GP_REC_HOST_SAMPLE = 21,/* struct gp_rec_host: host CPU load sample  */
	GP_REC_DEVICE = 22,     /* struct gp_rec_device: GPU description     */
	GP_REC_MODULE = 23,     /* struct gp_rec_module: a loaded ELF object */
	GP_REC_OVERHEAD = 24,   /* struct gp_rec_overhead: CUPTI's own time  */
	GP_REC_CALIBRATION = 25,/* struct gp_rec_calib: CUPTI's cost, measured */
	GP_REC_COUNTER = 26,    /* struct gp_rec_counter: a hardware counter */
	GP_REC_CLOCK_PAIR = 27, /* struct gp_rec_clock: wall clock vs trace  */
	GP_REC_LAUNCH_CFG = 28, /* struct gp_rec_launch_cfg: interned config */
	GP_REC_HOST_CALLBACK = 29, /* struct gp_rec_hostcb: a host callback's run */
	GP_REC_TYPE_COUNT
};

/*
 * API classes: what a call does, decided at capture time (from the hook id or
 * the CUPTI cbid) so the report needs no CUDA headers to attribute phases.
 */
enum gp_api_class {
	GP_API_OTHER = 0,
	GP_API_LAUNCH = 1,       /* kernel launch (any variant)                 */
	GP_API_MEMCPY_SYNC = 2,  /* cudaMemcpy, cudaMemcpy2D, ... (blocking)    */
	GP_API_MEMCPY_ASYNC = 3,
	GP_API_MEMSET_SYNC = 4,
	GP_API_MEMSET_ASYNC = 5,
	GP_API_SYNC_DEVICE = 6,  /* cudaDeviceSynchronize                       */
	GP_API_SYNC_STREAM = 7,  /* cudaStreamSynchronize                       */
	GP_API_SYNC_EVENT = 8,   /* cudaEventSynchronize                        */
	GP_API_GRAPH_LAUNCH = 9,
	GP_API_HOST_FUNC = 10,   /* cudaLaunchHostFunc, cudaStreamAddCallback   */
	GP_API_PROFILER = 11,    /* cudaProfilerStart / Stop                    */
	GP_API_SYNC_IMPLICIT = 12, /* cudaFree, cudaFreeHost, cudaMallocHost,
	                              cudaHostAlloc: wait for the device first  */
	GP_API_CLASS_COUNT
};

/* gp_rec_api.class_flags: low nibble = enum gp_api_class, high = flags. */
#define GP_API_CLASS(cf)   ((unsigned)(cf) & 0x0fu)
#define GP_APIF_DUR_US     0x10u /* dur is in microseconds (call > 4.29 s)     */
#define GP_APIF_ERROR      0x20u /* the call returned an error (see result)    */
#define GP_APIF_NESTED     0x40u /* hook: called from inside another hook      */

/* GP_REC_HOOK_API / GP_REC_RUNTIME_API / GP_REC_DRIVER_API */
struct gp_rec_api {
	uint8_t type;
	uint8_t class_flags; /* enum gp_api_class | GP_APIF_*                  */
	uint16_t api_id;     /* hook: libgpuphase hook id; CUPTI: the cbid     */
	uint32_t tid;        /* OS thread id (gettid / CUPTI threadId)         */
	uint64_t start;      /* call entry                                     */
	uint32_t dur;        /* exit - entry, ns (or us with GP_APIF_DUR_US)   */
	uint32_t corr;       /* hook: op id (pushed as CUSTOM2 external id);
	                        CUPTI: correlationId                           */
	uint32_t stream;     /* hook: stream handle folded to 32 bits (0 =
	                        legacy default, 2 = per-thread default); CUPTI: 0 */
	uint32_t result;     /* cudaError_t / CUresult returned                */
};

/* GP_REC_KERNEL: from CUpti_ActivityKernel10 (CONCURRENT_KERNEL). */
#define GP_OPF_END_MISSING 0x0001u /* CUPTI delivered end == 0 (forced flush) */
#define GP_OPF_GRAPH       0x0002u /* a GP_REC_GRAPH_NODE with ids follows   */
/* Bits 2..15 of flags: the id of the kernel's GP_REC_LAUNCH_CFG (0 = none
 * recorded: an older trace, or more distinct configurations than ids). */
#define GP_OPF_CFG_SHIFT   2u
#define GP_LAUNCH_CFG_MAX  0x3fffu
struct gp_rec_kernel {
	uint8_t type;
	uint8_t device;
	uint16_t flags;  /* GP_OPF_*, and the launch configuration's id        */
	uint32_t stream; /* CUPTI streamId                                     */
	uint64_t start;
	uint64_t end;
	uint32_t corr;   /* correlationId (joins the API record, ext corr)     */
	uint32_t name;   /* string id of the (mangled) kernel name             */
};

static inline uint32_t gp_kernel_cfg(const struct gp_rec_kernel *k)
{
	return (uint32_t)k->flags >> GP_OPF_CFG_SHIFT;
}

/* GP_REC_LAUNCH_CFG: a kernel launch configuration, interned like a string:
 * written once per trace before the first kernel record whose flags carry
 * its id (1..GP_LAUNCH_CFG_MAX). From CUpti_ActivityKernel10's gridX/Y/Z,
 * blockX/Y/Z, registersPerThread, staticSharedMemory, dynamicSharedMemory.
 * Added without a version change (older readers skip the type). */
struct gp_rec_launch_cfg {
	uint8_t type;
	uint8_t pad;
	uint16_t id;
	uint32_t grid[3];      /* blocks in x, y, z                              */
	uint16_t block[3];     /* threads per block in x, y, z                   */
	uint16_t regs;         /* registers per thread                           */
	uint32_t static_smem;  /* bytes of static shared memory per block        */
	uint32_t dynamic_smem; /* bytes of dynamic shared memory per block       */
};

/* GP_REC_MEMCPY / GP_REC_MEMSET: from CUpti_ActivityMemcpy6 / Memset4. */
#define GP_COPYF_ASYNC     0x01u /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC / MEMSET_ASYNC */
#define GP_COPYF_BYTES_KIB 0x02u /* bytes is in KiB (size >= 4 GiB)                 */
#define GP_COPYF_DUR_US    0x04u /* dur is in microseconds                           */
#define GP_COPYF_END_MISSING 0x08u
#define GP_COPYF_GRAPH     0x10u /* a GP_REC_GRAPH_NODE follows                     */
#define GP_COPYF_PAGEABLE  0x20u /* memcpy: its host side is pageable memory (CUPTI
                                    srcKind or dstKind PAGEABLE): the call blocked */
struct gp_rec_copy {
	uint8_t type;
	uint8_t device;
	uint8_t copy_kind; /* CUpti_ActivityMemcpyKind (HtoD = 1, DtoH = 2, ...); 0 for memset */
	uint8_t flags;     /* GP_COPYF_*                                        */
	uint32_t stream;
	uint64_t start;
	uint32_t dur;
	uint32_t corr;     /* correlationId                                     */
	uint32_t rt_corr;  /* memcpy: runtimeCorrelationId (joins the runtime API
	                      record); memset: same as corr                     */
	uint32_t bytes;
};

/* GP_REC_SYNC: from CUpti_ActivitySynchronization2. Host-side interval. */
struct gp_rec_sync {
	uint8_t type;
	uint8_t sync_type; /* CUpti_ActivitySynchronizationType                */
	uint16_t pad;
	uint32_t stream;   /* streamId, or UINT32_MAX when not applicable       */
	uint64_t start;
	uint64_t end;
	uint32_t corr;     /* correlationId of the API call                     */
	uint32_t event;    /* cudaEventId, UINT32_MAX when not applicable       */
};

/* GP_REC_EXTCORR: from CUpti_ActivityExternalCorrelation. */
struct gp_rec_extcorr {
	uint8_t type;
	uint8_t kind;  /* CUpti_ExternalCorrelationKind (CUSTOM2 = ours)       */
	uint16_t pad;
	uint32_t corr; /* CUPTI correlationId                                  */
	uint64_t ext_id;
	uint8_t pad2[16];
};

/* GP_REC_MARKER: NVTX events on a thread. */
enum gp_marker_kind {
	GP_MARK_PUSH = 1,  /* nvtxRangePush: opens a nested range on tid     */
	GP_MARK_POP = 2,   /* nvtxRangePop                                   */
	GP_MARK_START = 3, /* nvtxRangeStart: id identifies the range        */
	GP_MARK_END = 4,   /* nvtxRangeEnd                                   */
	GP_MARK_INSTANT = 5
};
struct gp_rec_marker {
	uint8_t type;
	uint8_t kind;    /* enum gp_marker_kind                               */
	uint16_t pad;
	uint32_t tid;
	uint64_t ts;
	uint64_t id;     /* range id for START/END, nesting depth for PUSH/POP */
	uint32_t name;   /* string id (0 for POP/END)                         */
	uint32_t domain; /* string id of the NVTX domain, 0 = default        */
};

/*
 * GP_REC_GRAPH_NODE. kind (a former pad byte, so 0 in older traces) says which:
 *  GP_GRAPH_OP       follows a kernel/copy record with GP_OPF_GRAPH: the ids
 *                    CUPTI gave that op (the instantiated graph and node);
 *                    corr = the op's correlationId (the cudaGraphLaunch's).
 *  GP_GRAPH_CAPTURED a node created by stream capture (CUPTI resource callback
 *                    GRAPHNODE_CREATED) on thread aux32 at time aux (lo/hi),
 *                    inside the hooked call whose op id is corr (0 = no hook).
 *  GP_GRAPH_CLONED   instantiation cloned captured node aux (lo/hi) of graph
 *                    aux32 into node_id of graph_id (GRAPHNODE_CLONED).
 */
enum gp_graph_kind { GP_GRAPH_OP = 0, GP_GRAPH_CAPTURED = 1, GP_GRAPH_CLONED = 2 };
struct gp_rec_graph {
	uint8_t type;
	uint8_t kind;    /* enum gp_graph_kind                               */
	uint8_t pad[2];
	uint32_t graph_id;
	uint64_t node_id;
	uint32_t corr;   /* see kind                                         */
	uint32_t aux_lo, aux_hi; /* 64-bit value split to keep 32 bytes      */
	uint32_t aux32;
};

/*
 * GP_REC_STRING: an interned string. Ids are process-unique (taken from one
 * atomic counter); the same text may be interned under several ids (one per
 * producing thread), and the report treats equal texts as equal. The first
 * 16 bytes live inline; the rest follow in ceil((len - 16) / 32) continuation
 * slots. Not NUL-terminated on disk; len is the exact byte length.
 */
#define GP_STRING_INLINE 16u
struct gp_rec_string {
	uint8_t type;
	uint8_t pad[3];
	uint32_t id;
	uint32_t len;
	uint32_t pad2;
	char text[GP_STRING_INLINE];
};

/* GP_REC_STACK: a distinct call stack (innermost first). 2 pcs inline, the
 * rest 4 per continuation slot. A pc with bit 63 set is no address but a
 * Python frame (GP_PC_PYFRAME): its low 32 bits are the string id of
 * "file.py:LINE (function)". Python frames come first (innermost first),
 * the native frames after them. */
#define GP_PC_PYFRAME (1ull << 63)
#define GP_PC_IS_PYFRAME(pc) (((pc) & GP_PC_PYFRAME) != 0)
#define GP_STACK_INLINE 2u
struct gp_rec_stack {
	uint8_t type;
	uint8_t pad;
	uint16_t depth;
	uint32_t id;
	uint64_t pad2;
	uint64_t pc[GP_STACK_INLINE];
};

/* GP_REC_STACK_REF: the stack captured at hook op `op`. */
struct gp_rec_stack_ref {
	uint8_t type;
	uint8_t pad[3];
	uint32_t stack;  /* gp_rec_stack.id */
	uint32_t op;     /* gp_rec_api.corr of the hook record */
	uint32_t tid;
	uint8_t pad2[16];
};

/* GP_REC_SYMBOL: a symbolised pc ("function+0x1c (libfoo.so)"). */
struct gp_rec_symbol {
	uint8_t type;
	uint8_t pad[3];
	uint32_t name;   /* string id */
	uint64_t pc;
	uint8_t pad2[16];
};

/* GP_REC_MODULE: an ELF object loaded in the process (the program, each
 * shared library) that holds at least one captured pc, written at exit next
 * to the GP_REC_SYMBOLs so that the report can symbolise offline from the
 * file itself (.symtab, DWARF lines). bias is the load bias (dlpi_addr: a
 * pc's address in the file is pc - bias); build_id holds the first
 * build_id_len (<= 16) bytes of the NT_GNU_BUILD_ID note, 0 if it has none:
 * the report uses the file only when its build id matches. */
#define GP_MODULE_BUILD_ID 16u
struct gp_rec_module {
	uint8_t type;
	uint8_t build_id_len;
	uint8_t pad[2];
	uint32_t path;   /* string id of the object's path */
	uint64_t bias;
	uint8_t build_id[GP_MODULE_BUILD_ID];
};

/* GP_REC_ITER / GP_REC_WINDOW */
enum gp_window_kind {
	GP_WIN_START = 1,      /* capture on                                    */
	GP_WIN_STOP = 2,       /* capture off (window complete)                 */
	GP_WIN_END_EARLY = 3   /* capture ended early: reason = -errno or code  */
};
struct gp_rec_mark {
	uint8_t type;
	uint8_t kind;    /* GP_REC_WINDOW: enum gp_window_kind; GP_REC_ITER: 0  */
	uint16_t pad;
	uint32_t tid;
	uint64_t ts;
	uint64_t iter;   /* iteration number (0-based, counted from process start) */
	int32_t reason;
	uint32_t name;   /* string id: what marked it (marker spec), 0 = none  */
};

/* GP_REC_THREAD */
struct gp_rec_thread {
	uint8_t type;
	uint8_t pad[3];
	uint32_t tid;
	uint64_t ts;     /* when the thread produced its first record         */
	uint32_t name;   /* string id of the thread name (0 = unknown)       */
	uint8_t pad2[12];
};

/* GP_REC_API_NAME: names for api ids, emitted once per id per trace. */
struct gp_rec_api_name {
	uint8_t type;
	uint8_t domain;  /* GP_REC_HOOK_API / GP_REC_RUNTIME_API / GP_REC_DRIVER_API */
	uint16_t api_id;
	uint32_t name;   /* string id */
	uint8_t api_class;
	uint8_t pad[23];
};

/* GP_REC_DROPS: cumulative drop counters, written periodically and at close. */
enum gp_drop_source { GP_DROP_RING = 1, GP_DROP_CUPTI = 2, GP_DROP_WRITE = 3 };
struct gp_rec_drops {
	uint8_t type;
	uint8_t source;  /* enum gp_drop_source                               */
	uint16_t pad;
	uint32_t tid;    /* ring owner, 0 for CUPTI / writer                  */
	uint64_t ts;
	uint64_t dropped; /* cumulative records lost from this source          */
	uint64_t pad2;
};

/* GP_REC_STATUS: capture mode and degradations, so the report can say which
 * phases it could not measure. */
enum gp_status_kind {
	GP_STATUS_CUPTI_OK = 1,          /* CUPTI activity capture active        */
	GP_STATUS_CUPTI_UNAVAILABLE = 2, /* hook-only: value = CUptiResult       */
	GP_STATUS_CLOCK_CALIBRATED = 3,  /* timestamp callback refused; value =
	                                    offset (ns) added to CUPTI times     */
	GP_STATUS_HOOKS_ABSENT = 4,      /* injection only: no preload hooks     */
	GP_STATUS_FORKED_CHILD = 5,
	GP_STATUS_SIZE_CAP = 6,          /* GPUPHASE_MAX_BYTES reached           */
	GP_STATUS_HOOK_COST = 7,         /* value = measured cost (ns) of one
	                                    hooked call's own work (hostload.c);
	                                    may come again, lower: the last holds */
	GP_STATUS_PROCESS_START = 8,     /* value = process start time on the
	                                    trace clock (ns)                     */
	GP_STATUS_INVARIANT_BROKEN = 9,  /* a GP_NEVER() check fired: capture was
	                                    turned off; value = how many fired */
	GP_STATUS_CUPTI_OVERHEAD = 10,   /* CUPTI's OVERHEAD records are on: a
	                                    launch blocked on a full queue has a
	                                    GP_OVH_COMMAND_BUFFER_FULL record    */
	GP_STATUS_CALIBRATION = 11,      /* the start-up calibration of CUPTI's
	                                    cost (libgpuphase/calibrate.c) was
	                                    wanted but not done: value = -errno,
	                                    detail says why                     */
	GP_STATUS_COUNTERS = 12,         /* GPUPHASE_COUNTERS: value = the replay
	                                    passes of a sampled launch (> 0), or
	                                    -1 / -CUptiResult when the counters
	                                    could not be collected; detail says
	                                    what was asked and why not           */
	GP_STATUS_REALTIME_STEP = 13,    /* CLOCK_REALTIME jumped against the
	                                    trace clock between two checks (a
	                                    step, not an NTP slew); value = the
	                                    jump (ns, signed); clock pairs were
	                                    written on both sides of it         */
	GP_STATUS_STARTUP_LOST = 14,     /* value = hooked calls that arrived
	                                    while the library started, waited
	                                    past the start-up bound and were not
	                                    recorded (also among the ring drops);
	                                    written once, at finish            */
	GP_STATUS_EXIT_UNSETTLED = 15,   /* finish could not wait for the GPU:
	                                    value = enum gp_exit_unsettled;
	                                    GPU records may be missing          */
	GP_STATUS_WINDOW_UNOPENED = 16,  /* GPUPHASE_WINDOW's window never
	                                    opened: value = iteration markers
	                                    seen; detail says why and which
	                                    marker would work; written once, at
	                                    finish                             */
	GP_STATUS_HOST_CALLBACK_LOST = 17 /* value = host callbacks enqueued in
	                                    the window whose run was not
	                                    recorded (more pending at once than
	                                    GP_HOSTCB_MAX_PENDING); written once,
	                                    at finish, only when not 0          */
};
/* GP_STATUS_EXIT_UNSETTLED's value. */
enum gp_exit_unsettled {
	GP_EXIT_SYNC_SKIPPED = 1,   /* exit inside a CUDA call: no synchronize,
	                               CUPTI flushed what it had             */
	GP_EXIT_DRAIN_ABANDONED = 2 /* synchronize or flush did not return
	                               within the bound (libgpuphase/lib.c)  */
};
struct gp_rec_status {
	uint8_t type;
	uint8_t kind;    /* enum gp_status_kind */
	uint16_t pad;
	uint32_t detail; /* string id with a human explanation, 0 = none     */
	uint64_t ts;
	int64_t value;
	uint64_t pad2;
};

/* GP_REC_HOST_SAMPLE: host load between the previous sample and ts. */
struct gp_rec_host {
	uint8_t type;
	uint8_t pad;
	uint16_t ncpu;
	uint32_t host_busy_pm;  /* host CPU busy, per mille of all CPUs       */
	uint64_t ts;
	uint32_t proc_cpu_pm;   /* this process's CPU use, per mille of one CPU */
	uint32_t interval_us;
	uint64_t cupti_ns;      /* cumulative ns in CUPTI buffer completion
	                           callbacks so far (0 = not measured)         */
};

/* GP_REC_DEVICE: one per GPU seen. */
struct gp_rec_device {
	uint8_t type;
	uint8_t device;
	uint16_t pad;
	uint32_t name;       /* string id ("NVIDIA H200") */
	uint32_t cc_major, cc_minor;
	uint32_t sm_count;
	uint8_t pad2[12];
};

/* GP_REC_OVERHEAD: from CUpti_ActivityOverhead3 (CUPTI_ACTIVITY_KIND_OVERHEAD),
 * host-clock interval of time CUPTI itself spent on a host thread. Added
 * without a version change (older readers skip the type). */
enum gp_overhead_kind {
	GP_OVH_OTHER = 0,               /* any other overheadKind (cupti_kind) */
	GP_OVH_INSTRUMENTATION = 1,     /* CUPTI_INSTRUMENTATION: inside a call */
	GP_OVH_COMMAND_BUFFER_FULL = 2  /* COMMAND_BUFFER_FULL: the call waited
	                                   on a full launch queue               */
};
struct gp_rec_overhead {
	uint8_t type;
	uint8_t kind;        /* enum gp_overhead_kind                          */
	uint16_t pad;
	uint32_t tid;        /* objectId.pt.threadId (thread objects), else 0  */
	uint64_t start;
	uint64_t end;
	uint32_t corr;       /* correlationId of the API call it lay in, 0 none */
	uint32_t cupti_kind; /* CUpti_ActivityOverheadKind as CUPTI gave it    */
};

/*
 * GP_REC_CALIBRATION: CUPTI's own cost per traced call, measured once by the
 * library at start-up (libgpuphase/calibrate.c) on the real CUDA path: the
 * median host time a cheap runtime call gains when CUPTI traces its runtime
 * layer (rt_ns) and its driver layer too (drv_ns), and the time a kernel
 * launch gains when CUPTI's kernel records are on (launch_ns). The report
 * takes it as the per-call deduction when the trace has no INSTRUMENTATION
 * overhead records. [start, start + dur] is the calibration itself (its own
 * cost to the program, on thread tid); flags says which parts were measured.
 * Calls the library makes while calibrating carry the external correlation
 * id GP_CALIB_EXT_ID (kind CUSTOM2) and launch the kernel named
 * GP_CALIB_KERNEL: the report leaves them out.
 */
#define GP_CALIBF_API    0x01u /* rt_ns and drv_ns measured                  */
#define GP_CALIBF_LAUNCH 0x02u /* launch_ns measured                        */
#define GP_CALIB_EXT_ID 0x6770636162000000ull /* "gpcab", above every op id */
#define GP_CALIB_KERNEL "gpuphase_calibrate"
struct gp_rec_calib {
	uint8_t type;
	uint8_t flags;       /* GP_CALIBF_*                                    */
	uint16_t samples;    /* calls timed per configuration                  */
	uint32_t tid;        /* the calibrating thread (OS tid)                */
	uint64_t start;
	uint32_t dur;        /* ns: the calibration's own length               */
	uint32_t rt_ns;      /* CUPTI's cost per traced runtime-layer call     */
	uint32_t drv_ns;     /* ... per traced driver-layer call               */
	uint32_t launch_ns;  /* ... and more per kernel launch (kernel records) */
};
/* GP_REC_COUNTER: one hardware-counter value (libgpuphase/counters.c, CUPTI's
 * range profiler with kernel replay) of a sampled launch — op is the hook op
 * id of that launch (its GP_REC_HOOK_API corr): the launch was replayed, its
 * GPU time is not its own and the report keeps it out of every phase — or,
 * with op 0, a peak of the device. value's unit is the metric's. Added
 * without a version change (older readers skip the type). */
enum gp_counter_metric {
	GP_CTR_DURATION_NS = 1,   /* gpu__time_duration.sum: one replay pass   */
	GP_CTR_DRAM_READ = 2,     /* dram__bytes_read.sum (bytes)              */
	GP_CTR_DRAM_WRITE = 3,    /* dram__bytes_write.sum (bytes)             */
	GP_CTR_FLOP_FP64 = 4,     /* 2 x dfma + dadd + dmul thread instructions */
	GP_CTR_FLOP_FP32 = 5,     /* 2 x ffma + fadd + fmul                    */
	GP_CTR_FLOP_FP16 = 6,     /* 2 x hfma + hadd + hmul                    */
	GP_CTR_TENSOR_PCT = 7,    /* sm__pipe_tensor_op_hmma_cycles_active, % of peak */
	GP_CTR_SM_PCT = 8,        /* sm__throughput, % of peak                 */
	GP_CTR_MEM_PCT = 9,       /* gpu__compute_memory_throughput, % of peak */
	GP_CTR_PASSES = 10,       /* replay passes the launch took             */
	GP_CTR_EXTRA_RANGES = 11, /* other launches profiled with it (driver-API
	                             launches of other threads): its values may
	                             be theirs                                 */
	/* op 0: the device's peaks, from the counters' peak_sustained x rate */
	GP_CTR_PEAK_DRAM_GBPS = 16,
	GP_CTR_PEAK_FP64_GFLOPS = 17,
	GP_CTR_PEAK_FP32_GFLOPS = 18,
	GP_CTR_PEAK_FP16_GFLOPS = 19
};
struct gp_rec_counter {
	uint8_t type;
	uint8_t metric;      /* enum gp_counter_metric                          */
	uint8_t device;
	uint8_t pad;
	uint32_t op;         /* hook op id of the replayed launch, 0 = device   */
	uint64_t ts;         /* when the value was collected                    */
	double value;
	uint32_t name;       /* string id of the kernel's name (0 for peaks)    */
	uint32_t sample;     /* which sample of that kernel (0-based)           */
};
/* GP_REC_CLOCK_PAIR: where the host's wall clock (CLOCK_REALTIME) stood at
 * trace time `raw`: the wall clock read between two reads of the trace
 * clock, the narrowest of `tries` such reads kept, raw their midpoint and
 * width_ns their distance (the pair's uncertainty). Written at start, about
 * every GP_CLOCK_PAIR_PERIOD_MS while capturing, on both sides of a step of
 * the wall clock and at end; the report lines up the traces of several
 * hosts on them (docs/metrics.md §9). Added without a version change. */
#define GP_CLOCK_PAIR_PERIOD_MS 1000u
enum gp_clock_pair_kind {
	GP_CLOCK_START = 1,    /* the trace starts                               */
	GP_CLOCK_PERIODIC = 2, /* while capturing                                */
	GP_CLOCK_STEP = 3,     /* either side of a wall-clock step               */
	GP_CLOCK_END = 4       /* the trace ends                                 */
};
struct gp_rec_clock {
	uint8_t type;
	uint8_t kind;      /* enum gp_clock_pair_kind                          */
	uint16_t tries;    /* reads made; the narrowest is kept               */
	uint32_t width_ns; /* the two trace-clock reads apart (UINT32_MAX: wider) */
	uint64_t raw;      /* trace clock (CLOCK_MONOTONIC_RAW) ns            */
	uint64_t realtime; /* CLOCK_REALTIME ns since the epoch               */
	uint64_t pad;
};

/* GP_REC_HOST_CALLBACK: one run of a host function enqueued on a stream
 * (cudaLaunchHostFunc, cudaStreamAddCallback and their _ptsz twins), which
 * CUPTI does not record: the library wraps the program's function and times
 * the call it makes of it (libgpuphase/hostcb.c). `op` is the hook op id of
 * the enqueuing call (its GP_REC_HOOK_API has the stream); `fn` is the
 * program's function, for its symbol. At most GP_HOSTCB_MAX_PENDING are
 * enqueued and not yet run at once; past that a callback runs unwrapped and
 * is counted (GP_STATUS_HOST_CALLBACK_LOST). Added without a version
 * change. */
#define GP_HOSTCB_MAX_PENDING 4096u
#define GP_HOSTCBF_STREAM_CALLBACK 0x01u /* cudaStreamAddCallback (not LaunchHostFunc) */
#define GP_HOSTCBF_DUR_US          0x02u /* dur is in microseconds (run > 4.29 s)     */
struct gp_rec_hostcb {
	uint8_t type;
	uint8_t flags;  /* GP_HOSTCBF_*                                        */
	uint16_t pad;
	uint32_t tid;   /* the thread that ran it (CUDA's callback thread)      */
	uint64_t start; /* trace clock, just before the program's function      */
	uint32_t dur;   /* ns (us with GP_HOSTCBF_DUR_US), until it returned    */
	uint32_t op;    /* hook op id of the enqueuing call                      */
	uint64_t fn;    /* the program's function pointer                        */
};

/* Any record, as stored. */
union gp_rec {
	uint8_t type;
	struct gp_rec_api api;
	struct gp_rec_kernel kernel;
	struct gp_rec_copy copy;
	struct gp_rec_sync sync;
	struct gp_rec_extcorr extcorr;
	struct gp_rec_marker marker;
	struct gp_rec_graph graph;
	struct gp_rec_string string;
	struct gp_rec_stack stack;
	struct gp_rec_stack_ref stack_ref;
	struct gp_rec_symbol symbol;
	struct gp_rec_mark mark;
	struct gp_rec_thread thread;
	struct gp_rec_api_name api_name;
	struct gp_rec_drops drops;
	struct gp_rec_status status;
	struct gp_rec_host host;
	struct gp_rec_device device;
	struct gp_rec_module module;
	struct gp_rec_overhead overhead;
	struct gp_rec_calib calib;
	struct gp_rec_counter counter;
	struct gp_rec_clock clock;
	struct gp_rec_launch_cfg launch_cfg;
	struct gp_rec_hostcb hostcb;
	uint8_t raw[GP_REC_SIZE];
};

_Static_assert(sizeof(struct gp_rec_api) == GP_REC_SIZE, "api record size");
_Static_assert(sizeof(struct gp_rec_kernel) == GP_REC_SIZE, "kernel record size");
_Static_assert(sizeof(struct gp_rec_copy) == GP_REC_SIZE, "copy record size");
_Static_assert(sizeof(struct gp_rec_sync) == GP_REC_SIZE, "sync record size");
_Static_assert(sizeof(struct gp_rec_overhead) == GP_REC_SIZE, "overhead record size");
_Static_assert(sizeof(struct gp_rec_calib) == GP_REC_SIZE, "calibration record size");
_Static_assert(sizeof(struct gp_rec_counter) == GP_REC_SIZE, "counter record size");
_Static_assert(sizeof(struct gp_rec_clock) == GP_REC_SIZE, "clock pair record size");
_Static_assert(sizeof(struct gp_rec_launch_cfg) == GP_REC_SIZE, "launch config record size");
_Static_assert(sizeof(struct gp_rec_hostcb) == GP_REC_SIZE, "host callback record size");
_Static_assert(sizeof(struct gp_rec_extcorr) == GP_REC_SIZE, "extcorr record size");
_Static_assert(sizeof(struct gp_rec_marker) == GP_REC_SIZE, "marker record size");
_Static_assert(sizeof(struct gp_rec_graph) == GP_REC_SIZE, "graph record size");
_Static_assert(sizeof(struct gp_rec_string) == GP_REC_SIZE, "string record size");
_Static_assert(sizeof(struct gp_rec_stack) == GP_REC_SIZE, "stack record size");
_Static_assert(sizeof(struct gp_rec_stack_ref) == GP_REC_SIZE, "stack ref size");
_Static_assert(sizeof(struct gp_rec_symbol) == GP_REC_SIZE, "symbol record size");
_Static_assert(sizeof(struct gp_rec_mark) == GP_REC_SIZE, "mark record size");
_Static_assert(sizeof(struct gp_rec_thread) == GP_REC_SIZE, "thread record size");
_Static_assert(sizeof(struct gp_rec_api_name) == GP_REC_SIZE, "api name size");
_Static_assert(sizeof(struct gp_rec_drops) == GP_REC_SIZE, "drops record size");
_Static_assert(sizeof(struct gp_rec_status) == GP_REC_SIZE, "status record size");
_Static_assert(sizeof(struct gp_rec_host) == GP_REC_SIZE, "host record size");
_Static_assert(sizeof(struct gp_rec_device) == GP_REC_SIZE, "device record size");
_Static_assert(sizeof(struct gp_rec_module) == GP_REC_SIZE, "module record size");
_Static_assert(sizeof(union gp_rec) == GP_REC_SIZE, "record size");

/* Continuation slots that follow a head record of this length (string bytes
 * or stack depth). */
static inline uint32_t gp_string_cont_slots(uint32_t len)
{
	/* 64-bit: a corrupt len near 2^32 must not wrap to a small count */
	return len <= GP_STRING_INLINE ? 0u
				       : (uint32_t)(((uint64_t)len - GP_STRING_INLINE + GP_REC_SIZE - 1u) / GP_REC_SIZE);
}
static inline uint32_t gp_stack_cont_slots(uint32_t depth)
{
	return depth <= GP_STACK_INLINE ? 0u : (depth - GP_STACK_INLINE + 3u) / 4u;
}

/* Total slots (head + continuations) of the record group starting at r. */
static inline uint32_t gp_rec_slots(const union gp_rec *r)
{
	switch (r->type) {
	case GP_REC_STRING: return 1u + gp_string_cont_slots(r->string.len);
	case GP_REC_STACK: return 1u + gp_stack_cont_slots(r->stack.depth);
	default: return 1u;
	}
}

/* Duration helpers for the compact dur fields. */
static inline uint64_t gp_api_dur_ns(const struct gp_rec_api *a)
{
	return (a->class_flags & GP_APIF_DUR_US) ? (uint64_t)a->dur * 1000u : a->dur;
}
static inline uint64_t gp_copy_dur_ns(const struct gp_rec_copy *c)
{
	return (c->flags & GP_COPYF_DUR_US) ? (uint64_t)c->dur * 1000u : c->dur;
}
static inline uint64_t gp_hostcb_dur_ns(const struct gp_rec_hostcb *h)
{
	return (h->flags & GP_HOSTCBF_DUR_US) ? (uint64_t)h->dur * 1000u : h->dur;
}
static inline uint64_t gp_copy_bytes(const struct gp_rec_copy *c)
{
	return (c->flags & GP_COPYF_BYTES_KIB) ? (uint64_t)c->bytes * 1024u : c->bytes;
}

#endif /* GP_FORMAT_H */
