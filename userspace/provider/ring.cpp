// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "ring.h"

#include <cerrno>
#include <sys/mman.h>
#include <utility>

#include "entry.h"
#include "proto_ring.h"

namespace softrnic
{

static_assert(sizeof(softrnic_ring_ctrl) == SOFTRNIC_RING_CTRL_SIZE);
static_assert(std::atomic_ref<uint32_t>::is_always_lock_free);
static_assert(std::atomic_ref<uint32_t>::required_alignment <= alignof(uint32_t));
static_assert(offsetof(softrnic_ring_ctrl, cons) % 64 == 0);
static_assert(offsetof(softrnic_ring_ctrl, kflags) % 64 == 0);
static_assert(offsetof(softrnic_ring_ctrl, uflags) % 64 == 0);

/* ----------------------------------------------------------- ring_mapping */

ring_mapping::ring_mapping(ring_mapping &&other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)), length_(std::exchange(other.length_, 0))
{
}

ring_mapping &ring_mapping::operator=(ring_mapping &&other) noexcept
{
	if (this != &other) {
		reset();
		addr_ = std::exchange(other.addr_, nullptr);
		length_ = std::exchange(other.length_, 0);
	}
	return *this;
}

ring_mapping::~ring_mapping()
{
	reset();
}

void ring_mapping::reset() noexcept
{
	if (addr_)
		munmap(addr_, length_);
	addr_ = nullptr;
	length_ = 0;
}

ring_mapping ring_mapping::map(int fd, uint64_t offset, size_t length)
{
	void *p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       static_cast<off_t>(offset));
	if (p == MAP_FAILED)
		throw_errno(errno, "mmap of a softrnic ring");
	return ring_mapping(p, length);
}

/* ------------------------------------------------------------------- ring */

int check_ring_info(const softrnic_ring_info &info, uint32_t min_slot_size) noexcept
{
	if (!sr_is_pow2(info.num_slots))
		return EPROTO;
	if (!info.slot_size || info.slot_size % SOFTRNIC_SLOT_ALIGN ||
	    info.slot_size < min_slot_size)
		return EPROTO;
	/* num_slots <= 2^31 and slot_size < 2^32: no overflow in 64 bits */
	if (info.mmap_size < sr_ring_bytes(info.num_slots, info.slot_size))
		return EPROTO;
	return 0;
}

ring::ring(void *base, uint32_t num_slots, uint32_t slot_size) noexcept
    : base_(static_cast<unsigned char *>(base)), num_slots_(num_slots), slot_size_(slot_size)
{
}

ring::ring(ring &&other) noexcept
    : base_(std::exchange(other.base_, nullptr)), num_slots_(std::exchange(other.num_slots_, 0)),
      slot_size_(std::exchange(other.slot_size_, 0)), mapping_(std::move(other.mapping_))
{
}

ring &ring::operator=(ring &&other) noexcept
{
	if (this != &other) {
		base_ = std::exchange(other.base_, nullptr);
		num_slots_ = std::exchange(other.num_slots_, 0);
		slot_size_ = std::exchange(other.slot_size_, 0);
		mapping_ = std::move(other.mapping_);
	}
	return *this;
}

ring ring::map(int fd, const softrnic_ring_info &info, uint32_t min_slot_size)
{
	const int err = check_ring_info(info, min_slot_size);
	if (err)
		throw_errno(err, "softrnic ring geometry");
	ring r;
	r.mapping_ = ring_mapping::map(fd, info.mmap_offset, info.mmap_size);
	r.base_ = static_cast<unsigned char *>(r.mapping_.addr());
	r.num_slots_ = info.num_slots;
	r.slot_size_ = info.slot_size;
	return r;
}

void *ring::slot(uint32_t counter) const noexcept
{
	return base_ + sr_slot_offset(counter, num_slots_, slot_size_);
}

bool ring::kernel_idle() const noexcept
{
	std::atomic_thread_fence(std::memory_order_seq_cst);
	return !(word(ctrl()->kflags).load(std::memory_order_relaxed) &
		 SOFTRNIC_KFLAG_KERNEL_ACTIVE);
}

bool ring::kernel_error() const noexcept
{
	std::atomic_thread_fence(std::memory_order_seq_cst);
	return word(ctrl()->kflags).load(std::memory_order_relaxed) & SOFTRNIC_KFLAG_ERROR;
}

void ring::arm(uint32_t flags) const noexcept
{
	word(ctrl()->uflags).fetch_or(flags, std::memory_order_seq_cst);
	/* the full fence of the contract, before the caller's next poll
	 * loads prod (a seq_cst RMW alone does not order a later acquire
	 * load in the C++ model; on x86 it costs nothing extra) */
	std::atomic_thread_fence(std::memory_order_seq_cst);
}

/* ---------------------------------------------------------- ring_producer */

ring_producer::ring_producer(ring r) noexcept : ring_(std::move(r))
{
	if (ring_) {
		prod_ = published_ = ring_.peek_prod();
		cons_seen_ = ring_.load_cons();
	}
}

void *ring_producer::reserve() noexcept
{
	const uint32_t n = ring_.num_slots();

	/* prod_ - cons_seen_ > n (a cons ahead of prod) counts as full too */
	if (prod_ - cons_seen_ >= n) {
		cons_seen_ = ring_.load_cons();
		if (prod_ - cons_seen_ >= n)
			return nullptr;
	}
	return ring_.slot(prod_);
}

void ring_producer::publish() noexcept
{
	if (prod_ != published_) {
		ring_.store_prod(prod_);
		published_ = prod_;
	}
}

/* ---------------------------------------------------------- ring_consumer */

ring_consumer::ring_consumer(ring r) noexcept : ring_(std::move(r))
{
	if (ring_)
		cons_ = published_ = prod_seen_ = ring_.peek_cons();
}

const void *ring_consumer::peek() noexcept
{
	if (cons_ == prod_seen_) {
		const uint32_t prod = ring_.load_prod();
		if (prod == cons_)
			return nullptr;
		if (!sr_ring_sane(prod, published_, ring_.num_slots())) {
			corrupt_ = true;
			return nullptr;
		}
		prod_seen_ = prod;
	}
	return ring_.slot(cons_);
}

void ring_consumer::publish() noexcept
{
	if (cons_ != published_) {
		ring_.store_cons(cons_);
		published_ = cons_;
	}
}

void ring_consumer::replace(ring r) noexcept
{
	ring_ = std::move(r);
	prod_seen_ = cons_;
	corrupt_ = false;
}

} // namespace softrnic
