/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/cmdq.h - lock-free multi-producer command queues (SMMUv3 command
 * queue, VT-d invalidation queue), multi-queue sets, and a software consumer.
 *
 * What it is for: every IOTLB/ATC/configuration invalidation of an IOMMU goes
 * through a ring that all CPUs share and that the IOMMU consumes in order.
 * This unit fills such a ring from many threads without a lock, publishes
 * many producers' commands with one producer-index write, waits for
 * completion (CMD_SYNC / invalidation wait) with a bound, and recovers from
 * command errors without losing the commands queued behind the bad one.  The
 * ring's "registers" are hooks: a driver points them at MMIO, an emulator or
 * a test at memory (struct ik_cmdq_sw below is such a consumer).
 *
 * Glossary
 *   entry        one command: 16 bytes (SMMUv3, VT-d 128-bit descriptors) or
 *                32 bytes (VT-d 256-bit descriptors); a ring holds 2^n.
 *   entry format struct ik_cmdq_fmt: a command set's entry size and how the
 *                queue encodes the entries it writes itself (no-op, sync)
 *                and tells them apart.  `fmt` in this header (and in
 *                ik_softiommu_cq_config) always means an entry format,
 *                never a page-table format (enum ik_pt_fmt).
 *   index        a free-running 32-bit count of entries.  The slot of index i
 *                is i mod 2^n; the registers carry i mod 2^(n+1) (the top bit
 *                is the wrap bit) or, with IK_CMDQ_CFG_NO_WRAP (VT-d IQH/IQT),
 *                i mod 2^n, in which case one slot stays empty.
 *   reserve      the next index to hand out; producers move it with one CAS.
 *   valid marker per reservation, at its first slot: the reservation's
 *                first and end index, which its producer stores (release)
 *                once all its entries are complete; the publisher retires
 *                it as it passes (one step per reservation, not per entry).
 *   tail record  per reservation, at its last slot: its first index and the
 *                issuer waiting for it (the owner an error is reported to),
 *                written with the entries, before the marker.
 *   published    the index up to which PROD has been written.  Whoever finds
 *                a contiguous run of valid reservations at `published` advances it
 *                and writes PROD (and rings the doorbell) once for the run.
 *   cons         the consumer's index (CONS register); `cons_cached` is the
 *                newest value any producer has read.
 *   sync         a completion command (SMMUv3 CMD_SYNC, VT-d wait descriptor)
 *                that the library appends for IK_CMDQ_SYNC: the issuer waits
 *                until the consumer has passed it.
 *   CERROR       the consumer stopped at an entry with an error (codes of
 *                SMMU_CMDQ_CONS.ERR); the library repairs and acknowledges.
 *
 * Progress.  Reserving is one CAS on `reserve`; writing and marking are
 * plain stores; publishing is a try-lock that is never waited for: a producer
 * that finds it held leaves, and the holder re-scans after releasing it (the
 * Dekker pair P1/P2 below), so the last producer to finish publishes
 * everyone's commands with one PROD write.  No producer waits for another
 * producer: issue() without IK_CMDQ_SYNC returns as soon as its entries are
 * valid.  The waits that exist - for free space and for a sync - wait for the
 * *consumer*, re-read CONS themselves (never relying on another producer to
 * refresh it), spin (see "Waiting"), then IK_ENV_YIELD()
 * (so that a preempted producer sharing the CPU runs and completes) and end
 * with -ETIMEDOUT once the consumer index has not moved for the configured
 * timeout: the bound restarts whenever the waiter sees the consumer move, so
 * -ETIMEDOUT always means "the consumer made no progress for timeout_ns"
 * (stuck, or stopped at a gap - see below), never "slow" or "other producers
 * went first".  Before it reports a timeout a waiter looks once more, so a
 * sync that completed is never reported as timed out.
 *
 * Fairness.  A producer that keeps finding too little free space (at its
 * third look) claims the space it needs (one claim at a time, taken with
 * one CAS on the slow path); while a claim is posted, other producers reserve only what leaves the claimed
 * space free.  So a request that holds the claim is served as soon as the
 * consumer has freed its space, however many smaller requests compete; when
 * several producers wait, the claim passes from one to the next as each is
 * served (not in FIFO order).  A request larger than the ring goes in
 * chunks of at most half the ring (see ik_cmdq_issue()).  The cost: while a
 * claimant is preempted after its space became free, producers that would
 * eat into that space wait (yielding) until it runs.  What the ring cannot avoid:
 * the consumer executes in order, so commands reserved behind a producer that
 * is preempted between its reservation and its valid markers are executed
 * once it runs again, and a thread preempted while it holds the publish lock
 * (a scan of valid markers and one PROD write) delays the PROD write for the
 * entries it has not yet covered; waiters yield to it meanwhile, and issuers
 * that do not wait are not delayed at all.
 *
 * Interrupts.  A yield cannot help a producer that an interrupt handler
 * interrupted on the same CPU: if the handler issued with IK_CMDQ_SYNC (a
 * kernel's DMA unmap in a device's completion interrupt does) while the
 * producer held entries reserved but unpublished, its sync would sit
 * behind them and wait until -ETIMEDOUT.  So the queue turns local
 * interrupts off itself, through the env's IK_ENV_IRQ_SAVE() /
 * IK_ENV_IRQ_RESTORE() (<iommukit/env.h>; Linux: local_irq_save() /
 * local_irq_restore()), around each insertion - from the reservation
 * through the valid marker and the publication (PROD write and doorbell),
 * once per chunk of a request larger than the ring - and around each hold
 * of its publish and error locks, which a handler could otherwise find
 * held by the thread it interrupted.  The queue never waits (for free
 * space, for a sync) inside such a section: it waits with the caller's
 * interrupt state, so a handler may run then, and finds nothing of this
 * CPU's unpublished.  Callers need no local_irq_save() of their own, and a
 * handler (already running with interrupts off) may issue, its waits then
 * spinning with IK_ENV_YIELD() as the env defines it there.  The default
 * hooks are no-ops: a host where no interrupt handler calls iommukit (user
 * space, a polled firmware) pays nothing.  Cost with real hooks: two env
 * calls per issue (per chunk), interrupts off for a reservation CAS, the
 * copies, one fence and a publish (which, while producers keep arriving,
 * may publish theirs too); plus a pair per wait step that publishes, and
 * per error handled.
 *
 * Waiting.  A waiter spins with IK_ENV_CPU_RELAX() - first 1, 2, 4, 8
 * pauses, then one pause per look with one IK_ENV_TIME_NS() read every 8
 * looks - until the wait has spun for the queue's spin budget, and only
 * then calls IK_ENV_YIELD() at each step: a yield may give away a whole time slice
 * (sched_yield() on a busy CPU; cond_resched() in a kernel), far longer
 * than a sync takes on a consumer that runs elsewhere.  The budget adapts
 * between min(2 us, bound) and the bound (ik_cmdq_set_spin(); default
 * IK_ENV_WAIT_SPIN_NS, else 50 us): a wait that had to yield halves it (the
 * consumer, or a producer preempted inside its insertion, needed this
 * CPU), a wait that ended in the timed spin doubles it.  One queue-wide
 * word, written only when a wait changes it.  ik_cmdq_get_wait_stats()
 * counts the yields.
 *
 * Errors (SMMUv3 CERROR semantics; a VT-d driver maps IQE to ILL and ITE to
 * ATC_INV_SYNC in its read_cons hook).  The consumer stops at the bad entry
 * with CONS pointing at it and reports the code through read_cons().  The
 * first thread that notices (any waiting issuer, or ik_cmdq_poll_errors()
 * from an error interrupt) takes the error lock and:
 *   ILL           replaces the entry with the format's no-op (SMMUv3: a
 *                 CMD_SYNC without signal; VT-d: a wait with IF = 1);
 *   ABT           acknowledges so the consumer fetches it again, up to
 *                 max_retries times, then replaces it with a no-op;
 *   ATC_INV_SYNC  (CONS at the sync that waited for a timed-out ATC
 *                 invalidation) re-executes the sync up to max_retries times,
 *                 then replaces it with a no-op;
 * then acknowledges (ack_error hook) so that the consumer resumes at CONS.
 * Nothing behind the entry is lost.  A replaced command is reported as -EIO
 * to the issue() call (or batch) that submitted it when that call waits with
 * IK_CMDQ_SYNC; every error, retried or not, also reaches the on_error hook
 * and the queue's counters.  The handler finds that issuer by walking the
 * tail records back from the published index to the reservation that holds
 * CONS (one step per reservation in between, at most the capacity; only on
 * this path); a CONS the consumer has already passed, or one past what was
 * published, is attributed to no one.
 *
 * Synchronization table
 *   ik_cmdq_issue, _issue_ex, _sync,    any number of threads at once, with
 *   ik_cmdq_batch_*, ik_cmdq_set_issue  each other and with the consumer.
 *   ik_cmdq_poll_errors                 any thread, any time (try-lock).
 *   ik_cmdq_get_stats                   any time; counters are approximate
 *                                       while issuers run.
 *   ik_cmdq_set_timeout                 any time; waits that begin after it
 *                                       returns use the new bound.
 *   ik_cmdq_init/create/destroy         exclusive: no other call on the queue.
 *   ik_cmdq_set_*                       as the queue functions they wrap.
 *   ik_cmdq_sw_consume/inject           one consumer thread; concurrent with
 *                                       every producer-side call.
 *
 * Ordering edges (each named where it is implemented, in src/cmdq/cmdq.c):
 *   R1 marker store-release  -> A1 publisher's marker load-acquire
 *        (the entries' bytes and the tail record are complete before
 *        publication; the error handler acquires `published`)
 *   R2 `published`/PROD store-release (write_prod hook) -> consumer's PROD
 *        load-acquire (entries visible to the consumer; ik_dma_wmb() for a
 *        device)
 *   C1 consumer's CONS store-release -> read_cons hook load-acquire
 *        (the consumer is done reading the slots it passed)
 *   C2 cons_cached CAS-release -> reserve's cons_cached load-acquire
 *        (C1 handed on to producers that did not read CONS themselves)
 *   S1 consumer's completion write (release) -> waiter's load-acquire of
 *        the sync slot (IK_CMDQ_CFG_MSI), or -> the acquire of the exchange
 *        that clears a status word, whose completed-index CAS (release)
 *        pairs with the waiter's acquire of that index
 *   E1 repair writes + ack_error hook (release) -> consumer's error-word
 *        load-acquire (the consumer re-fetches the repaired entry)
 *   P1/P2 producer: marker store; full fence; try-lock  |  publisher:
 *        unlock; full fence; marker load - one of the two sees the other, so
 *        no valid entry is left unpublished.
 *
 * Hosted-only assumptions: entries are stored little-endian, as both
 * architectures define them; a big-endian host must byte-swap in its entry format.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_CMDQ_H
#define IOMMUKIT_CMDQ_H

#include <iommukit/env.h>
#include <iommukit/atomic.h>

IK_BEGIN_DECLS

/* Error codes a consumer reports (SMMU_CMDQ_CONS.ERR numbering). */
#define IK_CMDQ_CERROR_NONE 0
#define IK_CMDQ_CERROR_ILL 1	      /* illegal command */
#define IK_CMDQ_CERROR_ABT 2	      /* abort on command fetch */
#define IK_CMDQ_CERROR_ATC_INV_SYNC 3 /* ATC invalidation timed out (at the sync) */

/* What an entry format's classify() says about an entry. */
#define IK_CMDQ_KIND_CMD 0  /* an ordinary command */
#define IK_CMDQ_KIND_SYNC 1 /* a completion command (also the no-op) */

/* Completion write requested by a sync entry. */
struct ik_cmdq_sync_info {
	bool write;	/* the consumer must write `data` (32 bits) at `addr` */
	ik_u64 addr;	/* device address */
	ik_u32 data;	/* the 32-bit completion value (the low half when wide) */
	/* The command stores 64 bits (AMD COMPLETION_WAIT) at an 8-byte
	 * aligned addr: data | (ik_u64)data_hi << 32.  false: 32 bits. */
	bool wide;
	ik_u32 data_hi;
};

/*
 * struct ik_cmdq_fmt - how a command set encodes the entries the queue itself
 * writes (a no-op, a sync) and how a consumer recognises them.  Provided for
 * SMMUv3, VT-d, RISC-V and AMD below; a user may define more.  All functions
 * pure.  The queue itself knows no command set: each format provided here is
 * defined with its hardware's command codec, in src/cmd/cmd_HW.c (HW: smmuv3, vtd, riscv, amd).
 *   encode_nop(ent)          a command with no effect (replaces a bad entry)
 *   encode_sync(ent, addr, data)  a sync; addr != 0: on completion the
 *                            consumer writes the 32-bit `data` at device
 *                            address addr (an address the command cannot
 *                            hold gives a sync without the write, which
 *                            ik_cmdq_init() detects through classify)
 *   classify(ent, si)        IK_CMDQ_KIND_*, or -EINVAL for an illegal entry;
 *                            fills *si for a sync
 */
struct ik_cmdq_fmt {
	const char *name;	/* the format's name ("smmuv3", ...) */
	unsigned entry_size; /* 16 or 32 */
	void (*encode_nop)(void *ent);
	void (*encode_sync)(void *ent, ik_u64 addr, ik_u32 data);
	int (*classify)(const void *ent, struct ik_cmdq_sync_info *si);
};

/* SMMUv3 (16 bytes; sync = CMD_SYNC, CS=IRQ with MSI when addr != 0). */
IK_API extern const struct ik_cmdq_fmt ik_cmdq_fmt_smmuv3;
/* VT-d 128-bit and 256-bit descriptors: sync = invalidation wait with SW=1
 * (status write of data at addr); no-op, and sync without an address = wait
 * with IF=1 (completion event only; no memory written).  See
 * src/cmd/cmd_vtd.c for why no VT-d wait has SW = IF = 0. */
IK_API extern const struct ik_cmdq_fmt ik_cmdq_fmt_vtd128;
IK_API extern const struct ik_cmdq_fmt ik_cmdq_fmt_vtd256;
/* RISC-V IOMMU (16 bytes, <iommukit/cmd/riscv.h>): sync = IOFENCE.C with
 * AV=1 (DATA written at ADDR); no-op, and sync without an address =
 * IOFENCE.C with AV=WSI=0.  The queue's cqh/cqt are plain indices: use
 * IK_CMDQ_CFG_NO_WRAP, as for VT-d. */
IK_API extern const struct ik_cmdq_fmt ik_cmdq_fmt_riscv;

/* AMD command buffer (16 bytes): sync = COMPLETION_WAIT with S=1 (a 64-bit
 * store of data, zero-extended, at addr: 8-byte aligned and below 2^52; a
 * guest's COMPLETION_WAIT stores its whole 64-bit StoreData);
 * no-op, and a sync without an address = COMPLETION_WAIT with S = I = 0.
 * Because the store is 8 bytes, a status array (4-byte words) cannot be used
 * with it: ik_cmdq_init() refuses one (odd slots are not 8-byte aligned). */
IK_API extern const struct ik_cmdq_fmt ik_cmdq_fmt_amd;

/*
 * struct ik_cmdq_regs - the queue's registers, as hooks.  ctx is the config's
 * regs_ctx.  Called concurrently from any producer thread, and possibly with
 * local interrupts off (see "Interrupts"): they must not sleep.
 *   read_cons(ctx, &cerror)  CONS as index|wrap (other bits clear); *cerror
 *                            = IK_CMDQ_CERROR_* when the consumer is stopped
 *                            at CONS with an unacknowledged error, else 0.
 *                            Must have acquire semantics (edge C1): report
 *                            the error state read *before* the index.
 *   write_prod(ctx, prod)    PROD = index|wrap.  Called by one thread at a
 *                            time, with increasing values; release (R2).
 *   doorbell(ctx)            optional: called after write_prod.
 *   ack_error(ctx)           the error at CONS has been handled: resume at
 *                            CONS (SMMUv3: toggle GERRORN.CMDQ_ERR).  Release
 *                            (E1).  Called by one thread at a time.
 */
struct ik_cmdq_regs {
	ik_u32 (*read_cons)(void *ctx, ik_u32 *cerror);
	void (*write_prod)(void *ctx, ik_u32 prod);
	void (*doorbell)(void *ctx);
	void (*ack_error)(void *ctx);
};

/* What on_error() receives, under the queue's error lock. */
struct ik_cmdq_error {
	ik_u32 index;	   /* the entry's index */
	ik_u32 cerror;	   /* IK_CMDQ_CERROR_* */
	unsigned attempt;  /* 1 for the first report of this entry */
	int result;	   /* 0: retried; -EIO: replaced by a no-op */
	const void *entry; /* the failing entry's bytes (before replacement) */
};

/* Config flags. */
#define IK_CMDQ_CFG_NO_WRAP 0x1u /* registers carry no wrap bit (VT-d) */
#define IK_CMDQ_CFG_MSI 0x2u	  /* syncs ask for a completion write into
				     their own slot; waiters poll that word */

/* Bounds of ik_cmdq_config.log2_entries, and the defaults of timeout_ns and max_retries. */
#define IK_CMDQ_LOG2_MIN 2
#define IK_CMDQ_LOG2_MAX 20
#define IK_CMDQ_DEFAULT_TIMEOUT_NS 1000000000ull
#define IK_CMDQ_DEFAULT_RETRIES 3u

/* struct ik_cmdq_config - what ik_cmdq_init() / ik_cmdq_create() need. */
struct ik_cmdq_config {
	const struct ik_cmdq_fmt *fmt;	/* the entry format (ik_cmdq_fmt_smmuv3, ...) */
	unsigned log2_entries;	/* IK_CMDQ_LOG2_MIN..MAX */
	unsigned flags;		/* IK_CMDQ_CFG_* */
	/* The ring: caller memory of entry_size << log2_entries bytes, aligned
	 * to the entry size, or NULL to carve it from the queue's memory.
	 * ring_dma: its device address (0: the CPU address), used for the
	 * completion addresses of IK_CMDQ_CFG_MSI syncs. */
	void *ring;
	ik_u64 ring_dma;
	const struct ik_cmdq_regs *regs;	/* the register hooks */
	void *regs_ctx;	/* their context */
	/* Bound of every wait, as time without consumer progress (see
	 * "Progress"); 0: the default, 1 s. */
	ik_u64 timeout_ns;
	unsigned max_retries;	/* ABT/ATC_INV_SYNC retries; 0: the default */
	/* Optional: told about every consumer error (under the error lock;
	 * must not call back into this queue). */
	void (*on_error)(void *ctx, const struct ik_cmdq_error *e);
	void *err_ctx;	/* on_error's context */
	const struct ik_allocator *alloc; /* create() only; NULL: the env's */
	/* Optional, IK_CMDQ_CFG_MSI only: completion words outside the ring.
	 * status: one ik_u32 per slot (4 << log2_entries bytes, 4-byte
	 * aligned) in memory the consumer writes coherently; status_dma: its
	 * device address (0: the CPU address).  The sync in slot s then asks
	 * for its completion write at status_dma + 4 * s (instead of into its
	 * own slot) of a nonzero word naming its index, and only the words
	 * prove completion: the consumer index passing a sync proves nothing
	 * then.  For consumers whose CONS counts entries fetched rather than
	 * completed (VT-d IQH), and whose late completion write must not land
	 * in a slot already refilled.  ik_cmdq_init() zeroes the array; the
	 * queue clears a word when a sync is filled into its slot and when its
	 * waiter has seen it, handing what the word proved on to a queue-wide
	 * completed index first, and a waiter also accepts a later lap's word
	 * (the consumer completes in order): a waiter whose sync completed
	 * learns it however long it did not look, even after the slot was
	 * reused.  Words must be written by the consumer only (32-bit, in
	 * order of completion).  A sync the error handler replaces gets its
	 * word written by the handler, so that its waiter wakes (and returns
	 * -EIO).  Residual: a word left by a waiter that timed out is taken as
	 * proof when its slot is next filled, which is wrong only if no sync
	 * used that slot for 2^32 entries. */
	ik_u32 *status;
	ik_u64 status_dma;
};

struct ik_cmdq;

/* Flags of ik_cmdq_issue(). */
#define IK_CMDQ_SYNC 0x1u /* append a sync and wait until it is consumed */

/* Per-call counters; ik_cmdq_issue_ex() adds to them. */
struct ik_cmdq_counters {
	ik_u64 cas_retries; /* failed reservation CASes */
	ik_u64 full_waits;  /* back-off steps waiting for free space */
	ik_u64 sync_waits;  /* back-off steps waiting for a sync */
	ik_u64 publishes;   /* PROD writes this caller made */
};

/* Queue-wide counters. */
struct ik_cmdq_stats {
	ik_u64 doorbells;   /* PROD writes */
	ik_u64 errors;	    /* consumer errors handled */
	ik_u64 retried;	    /* ... of which acknowledged for a retry */
	ik_u64 replaced;    /* ... of which replaced by a no-op */
	ik_u64 timeouts;    /* -ETIMEDOUT returned */
};

/*
 * ik_cmdq_memsize - bytes that ik_cmdq_init() needs for `cfg` (the queue
 * state, per-slot markers and tail records - 24 bytes a slot on a 64-bit
 * host - and, when cfg->ring is NULL, the ring), or 0 if the
 * config is invalid or NULL (0 is this function's error report).  O(1).
 */
IK_API ik_size ik_cmdq_memsize(const struct ik_cmdq_config *cfg);

/*
 * ik_cmdq_init - build a queue in caller memory `mem` (IK_CACHELINE aligned,
 * `size` >= ik_cmdq_memsize(cfg)).  Reads CONS once (read_cons) and starts
 * with PROD == CONS, which the hardware must already have.  No allocation.
 * Errors: -EINVAL (NULL mem, cfg or out, bad config, memory too small or
 * misaligned, NULL hooks or entry-format functions; with IK_CMDQ_CFG_MSI, a
 * ring (or status array) whose device addresses wrap past 2^64 or that the
 * entry format's sync cannot name, e.g. an SMMUv3 ring at or above 2^52, whose
 * syncs would never complete; a status array without IK_CMDQ_CFG_MSI or not
 * 4-byte aligned), `mem` untouched then.
 * Cost: with IK_CMDQ_CFG_MSI two trial encodes of a sync.
 * The queue needs no teardown; it never frees `mem`.
 */
IK_API int ik_cmdq_init(void *mem, ik_size size, const struct ik_cmdq_config *cfg,
			struct ik_cmdq **out);

/* ik_cmdq_create - ik_cmdq_init() on memory from cfg->alloc.  -EINVAL (NULL
 * cfg or out, bad config), -ENOMEM (nothing allocated then).  One
 * allocation. */
IK_API int ik_cmdq_create(const struct ik_cmdq_config *cfg, struct ik_cmdq **out);
/* Frees a queue from ik_cmdq_create(); NULL is ignored. */
IK_API void ik_cmdq_destroy(struct ik_cmdq *q);

/* The ring's CPU address and device address, and its entry count. */
IK_API void *ik_cmdq_ring(const struct ik_cmdq *q);
IK_API ik_u64 ik_cmdq_ring_dma(const struct ik_cmdq *q);
IK_API ik_u32 ik_cmdq_entries(const struct ik_cmdq *q);
/* Free-space capacity: entries, or entries - 1 with IK_CMDQ_CFG_NO_WRAP. */
IK_API ik_u32 ik_cmdq_capacity(const struct ik_cmdq *q);

/*
 * ik_cmdq_set_timeout - bound every wait that begins from now on (a full
 * queue, a sync, a batch) by timeout_ns nanoseconds without consumer
 * progress (see "Progress"); 0 restores the default
 * (IK_CMDQ_DEFAULT_TIMEOUT_NS).  Waits already under way keep their bound.
 * For a driver that tightens the bound once the device is known to be
 * healthy, or relaxes it while a slow device (or an emulator) catches up.
 * Returns the previous bound.  O(1), no callback.
 */
IK_API ik_u64 ik_cmdq_set_timeout(struct ik_cmdq *q, ik_u64 timeout_ns);

/*
 * ik_cmdq_set_spin - bound the time a waiter spins before it starts to
 * yield (see "Waiting"); 0 restores the default (IK_ENV_WAIT_SPIN_NS, else
 * 50000 ns).  The adaptive budget restarts from the new bound.  A bound of
 * 1 ns yields right after the untimed steps (15 pauses); a large one
 * never yields while the consumer makes progress on another CPU, at the
 * price of the CPU time spun.  Returns the previous bound.  O(1).
 */
IK_API ik_u64 ik_cmdq_set_spin(struct ik_cmdq *q, ik_u64 spin_ns);

/* What the waits did so far (see "Waiting"). */
struct ik_cmdq_wait_stats {
	ik_u64 yields;		/* IK_ENV_YIELD() calls by waiters */
	ik_u64 spin_ns;		/* the spin budget now */
	ik_u64 spin_max_ns;	/* its bound (ik_cmdq_set_spin()) */
};

/* Fill *ws.  -EINVAL for a NULL q or ws.  O(1), relaxed reads. */
IK_API int ik_cmdq_get_wait_stats(const struct ik_cmdq *q, struct ik_cmdq_wait_stats *ws);

/*
 * ik_cmdq_issue - append n commands (cmds: n entries of the entry format's size,
 * 4-byte aligned, already encoded) in order, and with IK_CMDQ_SYNC a sync
 * after them, then wait for the consumer to pass that sync.
 *
 * The commands of one call stay in order and - when n (+ 1 with
 * IK_CMDQ_SYNC) fits the capacity - contiguous, the sync included; a larger
 * request is split into chunks of at most half the ring (capacity / 2, at
 * least 1), still in order; then only the last chunk carries the sync, and
 * other threads' commands may come between chunks (the sync still follows
 * all of them).  A chunk never needs an empty ring, and the claim described
 * under "Fairness" gives every request its turn among smaller ones.
 *
 * Returns 0; -EINVAL (q NULL, cmds NULL with n > 0, unknown flag; nothing
 * queued);
 * -ETIMEDOUT (waiting for free space or for the sync, the consumer index did
 * not move for the timeout: the consumer is stuck, or stopped behind a
 * preempted producer's gap; commands already queued stay queued, those of a
 * chunk not yet reserved are not queued); -EIO (IK_CMDQ_SYNC only:
 * the consumer rejected one of this call's commands and it was replaced by a
 * no-op).  Without IK_CMDQ_SYNC it never waits except for free space.
 *
 * Cost: one CAS (plus one per lost race), the copies, one fence, and one
 * try-lock; the PROD write and doorbell are shared with concurrent callers.
 * Two env calls (IK_ENV_IRQ_SAVE/RESTORE) per chunk, local interrupts off
 * from the reservation through the publication only, never during a wait
 * (see "Interrupts").  May be called from an interrupt handler.  May call
 * every hook and on_error; write_prod, doorbell, ack_error and on_error
 * always with local interrupts off, read_cons sometimes (none may sleep).
 */
IK_API int ik_cmdq_issue(struct ik_cmdq *q, const void *cmds, unsigned n, unsigned flags);
/* As ik_cmdq_issue(), adding this call's counts to *cnt (may be NULL). */
IK_API int ik_cmdq_issue_ex(struct ik_cmdq *q, const void *cmds, unsigned n, unsigned flags,
			    struct ik_cmdq_counters *cnt);
/* A sync alone: wait until everything issued before this call is consumed.
 * Errors as ik_cmdq_issue() (-EINVAL for a NULL q). */
IK_API int ik_cmdq_sync(struct ik_cmdq *q);

/*
 * ik_cmdq_poll_errors - if the consumer is stopped on an error and no other
 * thread is handling it, handle it now (see "Errors").  For an error
 * interrupt, or a driver that issues without waiting.  Returns 1 if it
 * handled one, else 0.  May call read_cons, ack_error and on_error.
 */
IK_API int ik_cmdq_poll_errors(struct ik_cmdq *q);

/* Snapshot of the queue-wide counters. */
IK_API void ik_cmdq_get_stats(const struct ik_cmdq *q, struct ik_cmdq_stats *st);

/* ---------------------------------------------------------------- batches */

/*
 * IK_CMDQ_BATCH_MAX - commands a struct ik_cmdq_batch holds before it issues
 * them as one group: 64 unless the build defines it (in the env header, or
 * with -D) to a value from 1 to 1024.  A batch is IK_CMDQ_BATCH_MAX * 32
 * bytes plus 24 (2072 bytes at 64).  The value is part of the ABI of a
 * shared library (the caller allocates the batch): a program linking the
 * installed libiommukit must not change it; a vendored build compiles the
 * library and its callers together and may.
 *
 * Kernels: a batch of 64 on the stack is more than Linux's default frame
 * limit (CONFIG_FRAME_WARN, 2048 bytes on 64-bit).  Either build with a
 * small batch (IK_CMDQ_BATCH_MAX 16 is 536 bytes: examples/linux-module's
 * Kbuild does this and checks -Wframe-larger-than=2048), or keep 64 and
 * allocate the batch (kmalloc, or per-CPU/per-domain memory) instead of
 * declaring it as a local variable.  Fewer commands per group means one
 * PROD write and doorbell per IK_CMDQ_BATCH_MAX commands instead of per 64.
 */
#ifndef IK_CMDQ_BATCH_MAX
#define IK_CMDQ_BATCH_MAX 64
#endif
#if IK_CMDQ_BATCH_MAX < 1 || IK_CMDQ_BATCH_MAX > 1024
#error "IK_CMDQ_BATCH_MAX must be from 1 to 1024"
#endif

/* struct ik_cmdq_owner - not API: how the error handler reports to an
 * issuer that waits with IK_CMDQ_SYNC (or a batch): it stores the first
 * error of the issuer's commands in `status`, under the error lock. */
struct ik_cmdq_owner {
	int status;	/* first error of the issuer's commands */
	bool started;	/* `first` is set */
	ik_u32 first;	/* index of the issuer's first entry */
};

/*
 * struct ik_cmdq_batch - collect commands (on the stack in userspace; see
 * IK_CMDQ_BATCH_MAX for kernels), issue them in groups of IK_CMDQ_BATCH_MAX,
 * and finish with a sync.  Every batch that was
 * initialised must end with ik_cmdq_batch_submit() (errors of earlier groups
 * are reported through it).  Fields are private.
 */
struct ik_cmdq_batch {
	struct ik_cmdq *q;	/* private: the queue */
	unsigned n;	/* private: entries collected */
	struct ik_cmdq_owner own;	/* private: the batch's error report */
	ik_u64 ents[IK_CMDQ_BATCH_MAX * 4];	/* private: the collected entries */
};

/* Start an empty batch on q.  O(1). */
IK_API void ik_cmdq_batch_init(struct ik_cmdq_batch *b, struct ik_cmdq *q);
/* Append one encoded entry; issues the group (without sync) when full.
 * Returns 0, -EINVAL for a NULL b or cmd (nothing appended), or -ETIMEDOUT
 * (queue full; the batch remembers it). */
IK_API int ik_cmdq_batch_add(struct ik_cmdq_batch *b, const void *cmd);
/* Issue what is left with a sync and wait: 0, or the first error of the
 * batch (-ETIMEDOUT, -EIO as ik_cmdq_issue()).  The batch is then empty.
 * -EINVAL for a NULL b (nothing done). */
IK_API int ik_cmdq_batch_submit(struct ik_cmdq_batch *b);

/* ---------------------------------------------------------------- sets */

struct ik_cmdq_set;

/*
 * ik_cmdq_set_create - nr queues (as ECMDQ or VCMDQ give each CPU its own),
 * from nr configs.  -EINVAL (NULL cfgs or out, nr 0 or above 4096, a bad
 * config), -ENOMEM (everything freed).  nr + 1 allocations from
 * cfgs[0].alloc.
 */
IK_API int ik_cmdq_set_create(unsigned nr, const struct ik_cmdq_config *cfgs,
			      struct ik_cmdq_set **out);
/* Free the set and its queues (no call on them may be running); NULL is
 * ignored. */
IK_API void ik_cmdq_set_destroy(struct ik_cmdq_set *s);
/* Number of queues. */
IK_API unsigned ik_cmdq_set_size(const struct ik_cmdq_set *s);
/* Queue i (to point a consumer at it, or to pin a thread to one), or NULL if
 * i is out of range.  O(1). */
IK_API struct ik_cmdq *ik_cmdq_set_queue(struct ik_cmdq_set *s, unsigned i);
/* The caller's queue: IK_ENV_CPU_ID() mod nr.  A hint: keep commands that
 * belong together (an invalidation and its sync) in ONE issue() call on the
 * returned queue rather than picking twice. */
IK_API struct ik_cmdq *ik_cmdq_set_pick(struct ik_cmdq_set *s);
/* ik_cmdq_issue() on ik_cmdq_set_pick(s): a sync waits for that queue only.
 * -EINVAL also for a NULL s. */
IK_API int ik_cmdq_set_issue(struct ik_cmdq_set *s, const void *cmds, unsigned n,
			     unsigned flags);
/* Append a sync to every queue, then wait for all: 0 or the first error
 * (-ETIMEDOUT), or -EINVAL for a NULL s.  Errors of other issuers' commands
 * are not reported here. */
IK_API int ik_cmdq_set_sync_all(struct ik_cmdq_set *s);

/* ---------------------------------------------------------------- software consumer */

/*
 * struct ik_cmdq_sw - a consumer in software: the "device" side of a queue,
 * for emulators (the soft IOMMU) and tests.  It owns PROD/CONS registers in
 * memory; point a queue's regs at ik_cmdq_sw_regs with regs_ctx = the sw.
 *
 * ik_cmdq_sw_consume() drains entries in order: classifies each with the
 * entry format (illegal -> stops with CERROR_ILL), calls the handler, performs a
 * sync's completion write, advances CONS.  The handler returns 0, or a
 * CERROR code to stop there as the hardware would (ABT; ATC_INV_SYNC for an
 * ATC invalidation that timed out, reported at the next sync, as SMMUv3
 * does).  While stopped, consume() returns -EAGAIN until the producer side
 * acknowledges; it then resumes at the same entry (re-fetching it).
 *
 * A completion write that is not performed - outside the ring with no
 * write32 hook, or a 64-bit store not 8-byte aligned - is counted in
 * completions_refused; the sync itself still completes (CONS passes it, no
 * CERROR), as an SMMUv3 whose CMD_SYNC MSI write aborts still completes the
 * sync.  A producer that waits on a completion word outside the ring
 * therefore needs a hook that performs the store.
 *
 * Fields are private (completions_refused excepted); use the functions.
 */
struct ik_cmdq_sw_config {
	const struct ik_cmdq_fmt *fmt;	/* the queue's entry format */
	unsigned log2_entries;	/* the queue's log2 of entries */
	unsigned flags;		/* IK_CMDQ_CFG_NO_WRAP as the queue's */
	void *ring;		/* the queue's ring (ik_cmdq_ring()) */
	ik_u64 ring_dma;	/* its device address (ik_cmdq_ring_dma()) */
	/* Per entry: index, the entry's bytes, IK_CMDQ_KIND_*.  Returns 0 or a
	 * CERROR code.  May be NULL (every command succeeds). */
	ik_u32 (*handler)(void *ctx, ik_u32 index, const void *ent, int kind);
	void *ctx;	/* the handler's context */
	/* Completion writes outside the ring (NULL: not performed, counted
	 * in completions_refused; the address is the submitter's, a guest's
	 * in an emulator, so it is never a host pointer by default).  A
	 * 64-bit store (ik_cmdq_sync_info.wide) is two calls: the high word
	 * at addr + 4, then the low word (data) at addr. */
	void (*write32)(void *ctx, ik_u64 addr, ik_u32 val);
};

/* The consumer's state (ik_cmdq_sw_init()); private. */
struct ik_cmdq_sw {
	struct ik_cmdq_sw_config cfg;	/* private: the config, copied */
	ik_u32 mask, regmask;	/* private: index masks of the ring and of the registers */
	IK_ALIGNED(IK_CACHELINE) ik_u32 prod;	/* register: written by producers */
	IK_ALIGNED(IK_CACHELINE) ik_u32 cons;	/* register: index|wrap */
	ik_u32 cerror;				/* register: error at cons, 0 when none */
	ik_u32 cons_full;			/* consumer-private */
	bool atc_pending; /* consumer-private: an ATC invalidation failed; report at the next
			     sync */
	ik_u64 inject_at;			/* consumer-private: see inject() */
	ik_u32 inject_cerror;	/* consumer-private: see inject() */
	unsigned inject_times;	/* consumer-private: see inject() */
	ik_u64 consumed, syncs, errors;		/* consumer-private counters */
	/* Public counter: completion writes not performed (see above);
	 * written by the consumer with relaxed atomics, any thread may read
	 * it with ik_load_relaxed(). */
	ik_u64 completions_refused;
};

/* The register hooks; regs_ctx = the struct ik_cmdq_sw. */
IK_API extern const struct ik_cmdq_regs ik_cmdq_sw_regs;

/* Initialise (no allocation): registers at 0.  -EINVAL for a NULL sw or cfg
 * or a bad config (no entry format, ring or classify, a size out of range,
 * unknown flags, a ring or ring_dma not aligned to the entry size, or a ring
 * whose device addresses [ring_dma, ring_dma + size) would wrap past 2^64).
 * Entries and the completion addresses in them are untrusted (a guest wrote
 * them): a completion write lands in the ring only when all its bytes (4,
 * or 8 for a wide store) lie inside it, else it goes to write32 (none: not
 * performed); a wide store at an address that is not 8-byte aligned is not
 * performed; both refusals count in completions_refused; no address is
 * ever summed unchecked. */
IK_API int ik_cmdq_sw_init(struct ik_cmdq_sw *sw, const struct ik_cmdq_sw_config *cfg);

/* Consume up to `budget` entries: the number consumed (0 when empty), or
 * -EAGAIN when stopped on an unacknowledged error, or -EINVAL for a NULL sw.
 * Consumer thread only. */
IK_API int ik_cmdq_sw_consume(struct ik_cmdq_sw *sw, unsigned budget);

/* Error injection: the `after`-th entry from now (0: the next one) fails with
 * `cerror`, on its first `times` fetches.  Consumer thread only. */
IK_API void ik_cmdq_sw_inject(struct ik_cmdq_sw *sw, ik_u64 after, ik_u32 cerror,
			      unsigned times);

/* The error the consumer is stopped on (0: running).  Any thread. */
IK_API ik_u32 ik_cmdq_sw_error(const struct ik_cmdq_sw *sw);

IK_END_DECLS

#endif /* IOMMUKIT_CMDQ_H */
