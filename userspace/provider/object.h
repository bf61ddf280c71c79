// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Base for provider objects that libibverbs knows only by the C struct they
 * embed (ibv_pd now; verbs_cq, verbs_qp, ibv_srq, verbs_mr later).
 *
 *   class pd final : public verbs_object<pd, ibv_pd> { ... };
 *
 * The C struct lives in a standard-layout base, so a pointer to it and a
 * pointer to that base are interchangeable (pointer-interconvertible), and
 * static_cast takes us on to the derived class: from_ibv() is plain,
 * well-defined C++ with no offsetof tricks, whatever members the derived
 * class adds (rings, mappings, locks: ordinary RAII members whose
 * destructors run when the object is deleted).
 *
 * Objects are created with make() and handed to libibverbs with release();
 * the destroy verb takes them back with reclaim() and lets the unique_ptr
 * delete them.  Copying and moving are disabled: libibverbs holds the
 * address.
 */
#ifndef SOFTRNIC_OBJECT_H
#define SOFTRNIC_OBJECT_H

#include <memory>
#include <type_traits>
#include <utility>

namespace softrnic
{

template <typename Ibv> struct ibv_holder {
	Ibv ibv{}; /* zeroed, as libibverbs expects of fresh objects */
};

template <typename Derived, typename Ibv> class verbs_object : private ibv_holder<Ibv>
{
public:
	using ibv_type = Ibv;

	verbs_object(const verbs_object &) = delete;
	verbs_object &operator=(const verbs_object &) = delete;

	Ibv *ibv() noexcept { return &this->ibv_holder<Ibv>::ibv; }
	const Ibv *ibv() const noexcept { return &this->ibv_holder<Ibv>::ibv; }

	/* The provider object a libibverbs pointer belongs to.  Only valid for
	 * pointers that came out of our own ibv(). */
	static Derived *from_ibv(Ibv *p) noexcept
	{
		if (!p)
			return nullptr;
		auto *holder = reinterpret_cast<ibv_holder<Ibv> *>(p);
		return static_cast<Derived *>(static_cast<verbs_object *>(holder));
	}

	template <typename... Args> static std::unique_ptr<Derived> make(Args &&...args)
	{
		return std::unique_ptr<Derived>(new Derived(std::forward<Args>(args)...));
	}

	/* Hand ownership to libibverbs; returns the pointer it will keep. */
	static Ibv *release(std::unique_ptr<Derived> obj) noexcept { return obj.release()->ibv(); }

	/* Take ownership back from libibverbs (destroy verbs). */
	static std::unique_ptr<Derived> reclaim(Ibv *p) noexcept
	{
		return std::unique_ptr<Derived>(from_ibv(p));
	}

protected:
	verbs_object() = default;
	~verbs_object() = default;

private:
	static_assert(std::is_standard_layout_v<ibv_holder<Ibv>>);
};

} // namespace softrnic

#endif /* SOFTRNIC_OBJECT_H */
