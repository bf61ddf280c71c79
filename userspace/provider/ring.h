// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared rings: the SQ, RQ, SRQ and CQ memory the kernel allocates and the
 * process maps (layout and ordering contract: kernel/uapi/softrnic-abi.h;
 * index math: kernel/proto/ring.h).
 *
 *   ring_mapping   one mmap() of the uverbs fd, unmapped on destruction
 *   ring           geometry, slot addresses and the control words of one
 *                  ring, over a mapping (or, in tests, any memory)
 *   ring_producer  our side of an SQ, RQ or SRQ
 *   ring_consumer  our side of a CQ
 *
 * How the provider implements the ordering contract.  The control words in
 * struct softrnic_ring_ctrl are only ever accessed through
 * std::atomic_ref<uint32_t>; slots with plain loads and stores, which the
 * counters order:
 *   - producer: fill the slot(s), then publish() stores prod with RELEASE;
 *     reserve() loads cons with ACQUIRE, and only when the cons it saw last
 *     says the ring is full, before it hands out a slot again;
 *   - consumer: peek() loads prod with ACQUIRE (only when it has caught up
 *     with the prod it saw last) and the caller copies the slot out; then
 *     publish() stores cons with RELEASE;
 *   - kernel_idle()/kernel_error(): the SQ doorbell test (and the RQ's
 *     test for the error state) is a store-load pattern: prod is stored,
 *     then kflags loaded.  A seq_cst fence between the two pairs with the
 *     kernel's full barrier between clearing KERNEL_ACTIVE (or setting
 *     ERROR) and re-reading prod, so at least one side sees the other;
 *   - arm(): a fetch_or on uflags, then a seq_cst fence.  The kernel clears
 *     uflags with a compare-and-exchange when it takes the request, so ours
 *     must be an atomic read-modify-write too (a plain store could undo a
 *     request the kernel has not taken, or revive one it has); the fence
 *     orders it before the application's next poll loads prod (the
 *     kernel's side: publish the CQE, full barrier, look at uflags).
 * Each side keeps its own counter in process memory and only stores it into
 * the ring; it never trusts a re-read of its own counter from shared memory.
 * A producer or consumer object is not thread safe: the verbs object that
 * owns it serialises callers with its lock.
 */
#ifndef SOFTRNIC_RING_H
#define SOFTRNIC_RING_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "proto_ring.h"
#include "softrnic-abi.h"

namespace softrnic
{

/* A MAP_SHARED mapping of the uverbs fd; movable, unmapped on destruction. */
class ring_mapping
{
public:
	ring_mapping() noexcept = default;
	ring_mapping(ring_mapping &&other) noexcept;
	ring_mapping &operator=(ring_mapping &&other) noexcept;
	ring_mapping(const ring_mapping &) = delete;
	ring_mapping &operator=(const ring_mapping &) = delete;
	~ring_mapping();

	/* mmap(NULL, length, RW, MAP_SHARED, fd, offset); throws
	 * std::system_error with mmap's errno. */
	static ring_mapping map(int fd, uint64_t offset, size_t length);

	void *addr() const noexcept { return addr_; }
	size_t length() const noexcept { return length_; }

private:
	ring_mapping(void *addr, size_t length) noexcept : addr_(addr), length_(length) {}
	void reset() noexcept;

	void *addr_ = nullptr;
	size_t length_ = 0;
};

/*
 * Is a softrnic_ring_info from the kernel usable for entries of
 * min_slot_size bytes?  0, or EPROTO (geometry that does not describe a
 * ring: slot count not a power of two, slot size not a multiple of
 * SOFTRNIC_SLOT_ALIGN or too small, mapping smaller than the ring).
 */
int check_ring_info(const softrnic_ring_info &info, uint32_t min_slot_size) noexcept;

class ring
{
public:
	/* No ring (an RQ of a QP on an SRQ). */
	ring() noexcept = default;
	/* A ring over memory the caller owns and keeps alive (tests). */
	ring(void *base, uint32_t num_slots, uint32_t slot_size) noexcept;
	/* a moved-from ring is no ring */
	ring(ring &&other) noexcept;
	ring &operator=(ring &&other) noexcept;

	/* Maps the ring the kernel described; throws std::system_error
	 * (EPROTO for a bad geometry, else mmap's errno). */
	static ring map(int fd, const softrnic_ring_info &info, uint32_t min_slot_size);

	explicit operator bool() const noexcept { return base_ != nullptr; }
	uint32_t num_slots() const noexcept { return num_slots_; }
	uint32_t slot_size() const noexcept { return slot_size_; }
	softrnic_ring_ctrl *ctrl() const noexcept
	{
		return reinterpret_cast<softrnic_ring_ctrl *>(base_);
	}
	/* The slot counter c names. */
	void *slot(uint32_t counter) const noexcept;

	uint32_t load_prod() const noexcept
	{
		return word(ctrl()->prod).load(std::memory_order_acquire);
	}
	uint32_t load_cons() const noexcept
	{
		return word(ctrl()->cons).load(std::memory_order_acquire);
	}
	void store_prod(uint32_t v) const noexcept
	{
		word(ctrl()->prod).store(v, std::memory_order_release);
	}
	void store_cons(uint32_t v) const noexcept
	{
		word(ctrl()->cons).store(v, std::memory_order_release);
	}
	/* Our own counter as the ring holds it (only for initialising). */
	uint32_t peek_prod() const noexcept
	{
		return word(ctrl()->prod).load(std::memory_order_relaxed);
	}
	uint32_t peek_cons() const noexcept
	{
		return word(ctrl()->cons).load(std::memory_order_relaxed);
	}

	uint32_t load_kflags() const noexcept
	{
		return word(ctrl()->kflags).load(std::memory_order_acquire);
	}
	uint32_t load_uflags() const noexcept
	{
		return word(ctrl()->uflags).load(std::memory_order_relaxed);
	}

	/* After publishing prod: is the kernel not draining this SQ (so the
	 * doorbell must ring)?  Is the queue in the error state?  Both start
	 * with the seq_cst fence described above. */
	bool kernel_idle() const noexcept;
	bool kernel_error() const noexcept;

	/* CQ: request a completion event (SOFTRNIC_CQ_ARM_*). */
	void arm(uint32_t flags) const noexcept;

private:
	static std::atomic_ref<uint32_t> word(uint32_t &w) noexcept
	{
		return std::atomic_ref<uint32_t>(w);
	}

	unsigned char *base_ = nullptr;
	uint32_t num_slots_ = 0;
	uint32_t slot_size_ = 0;
	ring_mapping mapping_;
};

/* The producer side (SQ, RQ, SRQ).  Not thread safe. */
class ring_producer
{
public:
	ring_producer() noexcept = default;
	explicit ring_producer(ring r) noexcept;

	const ring &get() const noexcept { return ring_; }
	explicit operator bool() const noexcept { return static_cast<bool>(ring_); }

	/* The slot for the next entry, or null if the ring is full.  The
	 * entry becomes the kernel's only after commit() and publish(). */
	void *reserve() noexcept;
	void commit() noexcept { ++prod_; }
	/* Forget entries committed since counter `to` (never published). */
	void rewind(uint32_t to) noexcept { prod_ = to; }
	uint32_t prod() const noexcept { return prod_; }
	/* Entries committed but not yet published? */
	bool dirty() const noexcept { return prod_ != published_; }
	void publish() noexcept;

private:
	ring ring_;
	uint32_t prod_ = 0;
	uint32_t published_ = 0;
	uint32_t cons_seen_ = 0;
};

/* The consumer side (CQ).  Not thread safe. */
class ring_consumer
{
public:
	ring_consumer() noexcept = default;
	explicit ring_consumer(ring r) noexcept;

	const ring &get() const noexcept { return ring_; }

	/* The oldest unconsumed entry, or null if there is none (or if the
	 * producer's counter is one no honest producer can write: corrupt()). */
	const void *peek() noexcept;
	void pop() noexcept { ++cons_; }
	void publish() noexcept;
	bool corrupt() const noexcept { return corrupt_; }
	uint32_t cons() const noexcept { return cons_; }

	/* Switch to a ring that continues this one at the same counters
	 * (resize_cq); cons carries over. */
	void replace(ring r) noexcept;

	/*
	 * Remove the unconsumed entries drop() selects, keeping the order of
	 * the rest, and publish; returns how many went.  The survivors move
	 * towards prod and cons advances past the gap: only slots between
	 * cons and the producer's published prod are rewritten, which are
	 * the consumer's own, so the producer (which writes at prod and only
	 * reads cons) needs no notice.  Entries the producer publishes
	 * meanwhile are not looked at.
	 */
	template <typename Entry, typename Drop> uint32_t drop_if(Drop drop) noexcept
	{
		if (!peek()) /* loads prod, refusing an impossible one */
			return 0;
		const uint32_t prod = ring_.load_prod();
		if (sr_ring_sane(prod, published_, ring_.num_slots()))
			prod_seen_ = prod;
		uint32_t w = prod_seen_;
		for (uint32_t r = prod_seen_; r != cons_;) {
			--r;
			Entry e;
			std::memcpy(&e, ring_.slot(r), sizeof(e));
			if (drop(e))
				continue;
			if (--w != r)
				std::memcpy(ring_.slot(w), &e, sizeof(e));
		}
		const uint32_t dropped = w - cons_;
		cons_ = w;
		publish();
		return dropped;
	}

private:
	ring ring_;
	uint32_t cons_ = 0;
	uint32_t published_ = 0;
	uint32_t prod_seen_ = 0;
	bool corrupt_ = false;
};

} // namespace softrnic

#endif /* SOFTRNIC_RING_H */
