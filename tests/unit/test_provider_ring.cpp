// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider's ring layer (userspace/provider/ring.h): producer and
 * consumer on one ring, the geometry checks, the control words.
 *
 * This file is also built on its own with -fsanitize=thread
 * (softrnic-ring-tsan, ctest provider_ring_tsan): the two-thread test is
 * where a missing acquire/release would show up as a data race on the slot
 * contents.  Keep it free of anything but the ring code.
 */
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

#include "../../userspace/provider/ring.h"

using softrnic::ring;
using softrnic::ring_consumer;
using softrnic::ring_producer;

namespace
{

/* Ring memory the way the kernel hands it out: zeroed, page aligned. */
struct ring_memory {
	void *mem = nullptr;
	size_t bytes = 0;

	ring_memory(uint32_t num_slots, uint32_t slot_size)
	{
		bytes = SOFTRNIC_RING_CTRL_SIZE + size_t{num_slots} * slot_size;
		bytes = (bytes + 4095) & ~size_t{4095};
		mem = std::aligned_alloc(4096, bytes);
		REQUIRE(mem != nullptr);
		std::memset(mem, 0, bytes);
	}
	~ring_memory() { std::free(mem); }
	softrnic_ring_ctrl *ctrl() const { return static_cast<softrnic_ring_ctrl *>(mem); }
};

/* What a slot carries in the tests: a sequence number and a pattern
 * derived from it over the whole slot. */
void fill_slot(void *slot, uint32_t slot_size, uint64_t seq)
{
	auto *w = static_cast<uint64_t *>(slot);
	for (uint32_t i = 0; i < slot_size / 8; i++)
		w[i] = seq * 0x9e3779b97f4a7c15ULL + i;
}

bool slot_holds(const void *slot, uint32_t slot_size, uint64_t seq)
{
	const auto *w = static_cast<const uint64_t *>(slot);
	for (uint32_t i = 0; i < slot_size / 8; i++)
		if (w[i] != seq * 0x9e3779b97f4a7c15ULL + i)
			return false;
	return true;
}

} // namespace

TEST_CASE("provider ring: fill, drain and wrap on one thread", "[provider][ring]")
{
	const uint32_t n = 8, sz = 64;
	ring_memory m(n, sz);
	ring_producer p(ring(m.mem, n, sz));
	ring_consumer c(ring(m.mem, n, sz));

	uint64_t next_in = 0, next_out = 0;
	for (int round = 0; round < 5; round++) {
		/* fill to the brim: exactly num_slots entries fit */
		for (uint32_t i = 0; i < n; i++) {
			void *s = p.reserve();
			REQUIRE(s != nullptr);
			fill_slot(s, sz, next_in++);
			p.commit();
		}
		CHECK(p.reserve() == nullptr);
		/* nothing is visible before publish */
		CHECK(c.peek() == nullptr);
		p.publish();
		CHECK(m.ctrl()->prod == static_cast<uint32_t>(next_in));

		/* consume half, publish, the producer gets exactly that back */
		for (uint32_t i = 0; i < n / 2; i++) {
			const void *s = c.peek();
			REQUIRE(s != nullptr);
			CHECK(slot_holds(s, sz, next_out++));
			c.pop();
		}
		CHECK(p.reserve() == nullptr); /* cons not published yet */
		c.publish();
		CHECK(m.ctrl()->cons == static_cast<uint32_t>(next_out));
		for (uint32_t i = 0; i < n / 2; i++) {
			void *s = p.reserve();
			REQUIRE(s != nullptr);
			fill_slot(s, sz, next_in++);
			p.commit();
		}
		CHECK(p.reserve() == nullptr);
		p.publish();
		while (const void *s = c.peek()) {
			CHECK(slot_holds(s, sz, next_out++));
			c.pop();
		}
		c.publish();
		CHECK(next_out == next_in);
		CHECK_FALSE(c.corrupt());
	}
}

TEST_CASE("provider ring: counters wrap around 2^32", "[provider][ring]")
{
	const uint32_t n = 4, sz = 64;
	ring_memory m(n, sz);
	/* a ring whose counters start just below the wrap, as if it had
	 * carried 2^32 - 2 entries already */
	m.ctrl()->prod = m.ctrl()->cons = 0xfffffffeU;
	ring_producer p(ring(m.mem, n, sz));
	ring_consumer c(ring(m.mem, n, sz));
	for (uint64_t seq = 0; seq < 10; seq++) {
		void *s = p.reserve();
		REQUIRE(s != nullptr);
		fill_slot(s, sz, seq);
		p.commit();
		p.publish();
		const void *r = c.peek();
		REQUIRE(r != nullptr);
		CHECK(r == s);
		CHECK(slot_holds(r, sz, seq));
		c.pop();
		c.publish();
	}
	CHECK(m.ctrl()->prod == 8);
	CHECK(m.ctrl()->cons == 8);
}

TEST_CASE("provider ring: rewind forgets unpublished entries", "[provider][ring]")
{
	ring_memory m(4, 64);
	ring_producer p(ring(m.mem, 4, 64));
	const uint32_t start = p.prod();
	for (int i = 0; i < 3; i++) {
		REQUIRE(p.reserve() != nullptr);
		p.commit();
	}
	CHECK(p.dirty());
	p.rewind(start);
	CHECK_FALSE(p.dirty());
	p.publish();
	CHECK(m.ctrl()->prod == 0);
}

TEST_CASE("provider ring: a consumer refuses an impossible producer counter", "[provider][ring]")
{
	ring_memory m(4, 64);
	ring_consumer c(ring(m.mem, 4, 64));
	m.ctrl()->prod = 5; /* 5 entries in a 4-slot ring */
	CHECK(c.peek() == nullptr);
	CHECK(c.corrupt());
	/* a producer never hands out a slot the consumer may still own, even
	 * if the consumer's counter runs ahead of it */
	ring_memory m2(4, 64);
	ring_producer p(ring(m2.mem, 4, 64));
	for (int i = 0; i < 4; i++) {
		REQUIRE(p.reserve() != nullptr);
		p.commit();
	}
	p.publish();
	m2.ctrl()->cons = 7; /* prod is 4 */
	CHECK(p.reserve() == nullptr);
	m2.ctrl()->cons = 1; /* honest again: one slot free */
	CHECK(p.reserve() != nullptr);
}

TEST_CASE("provider ring: control words", "[provider][ring]")
{
	ring_memory m(4, 64);
	ring r(m.mem, 4, 64);
	CHECK(r.kernel_idle());
	CHECK_FALSE(r.kernel_error());
	m.ctrl()->kflags = SOFTRNIC_KFLAG_KERNEL_ACTIVE;
	CHECK_FALSE(r.kernel_idle());
	CHECK_FALSE(r.kernel_error());
	m.ctrl()->kflags = SOFTRNIC_KFLAG_ERROR;
	CHECK(r.kernel_idle());
	CHECK(r.kernel_error());

	/* arming ORs into uflags: NEXT stays when SOLICITED is asked too,
	 * and the kernel taking the request (xchg to 0) re-enables both */
	r.arm(SOFTRNIC_CQ_ARM_SOLICITED);
	CHECK(m.ctrl()->uflags == SOFTRNIC_CQ_ARM_SOLICITED);
	r.arm(SOFTRNIC_CQ_ARM_NEXT);
	CHECK(m.ctrl()->uflags == (SOFTRNIC_CQ_ARM_SOLICITED | SOFTRNIC_CQ_ARM_NEXT));
	m.ctrl()->uflags = 0;
	r.arm(SOFTRNIC_CQ_ARM_NEXT);
	CHECK(m.ctrl()->uflags == SOFTRNIC_CQ_ARM_NEXT);
	/* nothing else in the control block moved */
	CHECK(m.ctrl()->prod == 0);
	CHECK(m.ctrl()->cons == 0);
}

TEST_CASE("provider ring: geometry from the kernel is checked", "[provider][ring]")
{
	softrnic_ring_info info{};
	info.num_slots = 16;
	info.slot_size = 64;
	info.mmap_size = 4096 * 2;
	CHECK(softrnic::check_ring_info(info, 64) == 0);
	CHECK(softrnic::check_ring_info(info, 65) == EPROTO); /* entries do not fit */
	info.num_slots = 12;
	CHECK(softrnic::check_ring_info(info, 64) == EPROTO); /* not a power of two */
	info.num_slots = 0;
	CHECK(softrnic::check_ring_info(info, 64) == EPROTO);
	info.num_slots = 16;
	info.slot_size = 96;
	CHECK(softrnic::check_ring_info(info, 64) == EPROTO); /* not slot aligned */
	info.slot_size = 64;
	info.mmap_size = SOFTRNIC_RING_CTRL_SIZE + 16 * 64 - 1;
	CHECK(softrnic::check_ring_info(info, 64) == EPROTO); /* mapping too small */
	info.num_slots = 1U << 31;
	info.slot_size = 1U << 31;
	info.mmap_size = 0xffffffffU;
	CHECK(softrnic::check_ring_info(info, 64) == EPROTO); /* no 32-bit overflow */
}

TEST_CASE("provider ring: mapping a ring and unmapping it", "[provider][ring]")
{
	/* a memfd stands in for the uverbs fd: same mmap() call */
	const int fd = memfd_create("softrnic-ring", MFD_CLOEXEC);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, 8192) == 0);
	softrnic_ring_info info{};
	info.mmap_offset = 4096;
	info.mmap_size = 4096;
	info.num_slots = 32;
	info.slot_size = 64;
	REQUIRE(pwrite(fd, "\x07\x00\x00\x00", 4, 4096) == 4); /* prod = 7 */

	void *addr = nullptr;
	{
		ring r = ring::map(fd, info, sizeof(softrnic_cqe));
		REQUIRE(static_cast<bool>(r));
		addr = r.ctrl();
		CHECK(r.load_prod() == 7);
		CHECK(r.num_slots() == 32);
		CHECK(r.slot(33) == static_cast<char *>(addr) + SOFTRNIC_RING_CTRL_SIZE + 64);
		ring moved = std::move(r);
		CHECK_FALSE(static_cast<bool>(r));
		moved.store_cons(5);
		uint32_t cons = 0;
		REQUIRE(pread(fd, &cons, 4, 4096 + 64) == 4);
		CHECK(cons == 5); /* MAP_SHARED: the "kernel" sees it */
	}
	/* unmapped when the last owner went away */
	unsigned char vec = 0;
	CHECK(mincore(addr, 4096, &vec) == -1);
	CHECK(errno == ENOMEM);

	/* a bad geometry or a failing mmap() is an exception carrying errno */
	info.num_slots = 3;
	try {
		(void)ring::map(fd, info, 64);
		FAIL("bad geometry accepted");
	} catch (const std::system_error &e) {
		CHECK(e.code().value() == EPROTO);
	}
	info.num_slots = 32;
	close(fd);
	try {
		(void)ring::map(fd, info, 64);
		FAIL("mmap of a closed fd succeeded");
	} catch (const std::system_error &e) {
		CHECK(e.code().value() == EBADF);
	}
}

/*
 * The contract under load: one producer thread, one consumer thread, a
 * small ring so that both sides keep running into full and empty.  Every
 * entry's sequence number and whole-slot pattern is checked, and both
 * directions of the handshake are exercised (the producer waits for
 * published cons, the consumer for published prod).
 */
TEST_CASE("provider ring: producer and consumer threads move 1e6 entries",
	  "[provider][ring][ring-threads]")
{
	const uint32_t n = 64, sz = 128;
	const uint64_t total = 1'000'000;
	ring_memory m(n, sz);
	ring_producer p(ring(m.mem, n, sz));
	ring_consumer c(ring(m.mem, n, sz));

	std::thread producer([&] {
		uint64_t seq = 0;
		while (seq < total) {
			/* batches of up to 7, published together */
			int batch = 0;
			while (batch < 7 && seq < total) {
				void *s = p.reserve();
				if (!s)
					break;
				fill_slot(s, sz, seq++);
				p.commit();
				batch++;
			}
			p.publish();
			if (!batch)
				std::this_thread::yield();
		}
	});

	uint64_t seq = 0, bad = 0, max_batch = 0;
	while (seq < total) {
		uint64_t batch = 0;
		while (const void *s = c.peek()) {
			if (!slot_holds(s, sz, seq))
				bad++;
			seq++;
			batch++;
			c.pop();
			if (batch == 5)
				break; /* publish in small batches too */
		}
		c.publish();
		max_batch = std::max(max_batch, batch);
		if (!batch)
			std::this_thread::yield();
	}
	producer.join();

	CHECK(bad == 0);
	CHECK(seq == total);
	CHECK_FALSE(c.corrupt());
	CHECK(c.peek() == nullptr);
	CHECK(m.ctrl()->prod == static_cast<uint32_t>(total));
	CHECK(m.ctrl()->cons == static_cast<uint32_t>(total));
	CHECK(max_batch >= 1);
}
