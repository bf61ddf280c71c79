// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Command-line parsing of the softrnic tool: everything is validated before
// the kernel is asked anything.
#include <catch2/catch.hpp>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tool/cli_args.h"

using namespace softrnic::tool;

namespace
{

Result<Options, UsageError> parse(std::initializer_list<std::string_view> args)
{
	std::vector<std::string_view> v(args);
	return parse_args(v);
}

std::string usage_error(std::initializer_list<std::string_view> args)
{
	auto r = parse(args);
	REQUIRE_FALSE(r);
	return r.error().message;
}

} // namespace

TEST_CASE("tool args: list is the default command", "[tool]")
{
	auto r = parse({});
	REQUIRE(r);
	CHECK(r->command == Command::list);
	CHECK_FALSE(r->all);

	r = parse({"list"});
	REQUIRE(r);
	CHECK(r->command == Command::list);

	for (auto flag : {"--all", "-a"}) {
		r = parse({"list", flag});
		REQUIRE(r);
		CHECK(r->all);
	}
	r = parse({"--all"});
	REQUIRE(r);
	CHECK(r->command == Command::list);
	CHECK(r->all);

	CHECK(usage_error({"list", "roce0"}) == "list: unexpected argument 'roce0'");
}

TEST_CASE("tool args: add takes NAME TYPE NETDEV", "[tool]")
{
	for (auto type : {"roce", "iwarp"}) {
		auto r = parse({"add", "dev0", type, "eth0"});
		REQUIRE(r);
		CHECK(r->command == Command::add);
		CHECK(r->name == "dev0");
		CHECK(r->link_type == type);
		CHECK(r->netdev == "eth0");
	}
	CHECK(usage_error({"add", "roce0", "rxe", "eth0"}) ==
	      "add roce0: unknown type 'rxe' (expected roce or iwarp)");
	CHECK(usage_error({"add", "roce0", "ROCE", "eth0"}).find("unknown type") !=
	      std::string::npos);
	CHECK(usage_error({"add", "roce0", "roce"}) ==
	      "add: expected NAME type roce|iwarp netdev NETDEV");
	CHECK(usage_error({"add", "roce0", "roce", "eth0", "x"}) ==
	      "add: expected NAME type roce|iwarp netdev NETDEV");
}

TEST_CASE("tool args: add takes the rdma tool's NAME type TYPE netdev NETDEV", "[tool]")
{
	auto r = parse({"add", "roce0", "type", "roce", "netdev", "eth0"});
	REQUIRE(r);
	CHECK(r->name == "roce0");
	CHECK(r->link_type == "roce");
	CHECK(r->netdev == "eth0");
	r = parse({"add", "iw0", "netdev", "eth1", "type", "iwarp"});
	REQUIRE(r);
	CHECK(r->link_type == "iwarp");
	CHECK(r->netdev == "eth1");
	CHECK(usage_error({"add", "roce0", "type", "roce", "type", "eth0"}) ==
	      "add: expected NAME type roce|iwarp netdev NETDEV, not 'type'");
	CHECK(usage_error({"add", "roce0", "kind", "roce", "netdev", "eth0"}) ==
	      "add: expected NAME type roce|iwarp netdev NETDEV, not 'kind'");
	CHECK(usage_error({"add", "roce0", "type", "rxe", "netdev", "eth0"}) ==
	      "add roce0: unknown type 'rxe' (expected roce or iwarp)");
}

TEST_CASE("tool args: show, stats, JSON", "[tool]")
{
	auto r = parse({"show"});
	REQUIRE(r);
	CHECK(r->command == Command::show);
	CHECK(r->name.empty());
	r = parse({"-j", "stats", "roce0"});
	REQUIRE(r);
	CHECK(r->command == Command::stats);
	CHECK(r->name == "roce0");
	CHECK(r->json);
	CHECK_FALSE(r->pretty);
	r = parse({"list", "-p"});
	REQUIRE(r);
	CHECK(r->json);
	CHECK(r->pretty);
	r = parse({"show", "--all"});
	REQUIRE(r);
	CHECK(r->all);
	r = parse({"delete", "roce0"});
	REQUIRE(r);
	CHECK(r->command == Command::del);
	r = parse({"help"});
	REQUIRE(r);
	CHECK(r->command == Command::help);
	r = parse({"-j", "--version"});
	REQUIRE(r);
	CHECK(r->command == Command::version);
	CHECK(r->json);
	CHECK(version_json(false).rfind("{\"version\":\"", 0) == 0);
	CHECK(usage_error({"show", "a", "b"}) == "show: unexpected argument 'b'");
	CHECK(usage_error({"stats", "a/b"}).rfind("stats: device name", 0) == 0);
	CHECK(usage_error({"show", "roce0", "--all"}) ==
	      "--all and a device name exclude each other");
}

TEST_CASE("tool args: device and netdev names follow kernel limits", "[tool]")
{
	CHECK_FALSE(check_device_name("roce0"));
	CHECK_FALSE(check_device_name(std::string(63, 'r')));
	CHECK(check_device_name(std::string(64, 'r')));
	CHECK(check_device_name(""));
	CHECK(check_device_name("roce%d"));
	CHECK(check_device_name("a/b"));
	CHECK(check_device_name(".."));
	CHECK(check_device_name("a b"));

	CHECK_FALSE(check_netdev_name("eth0"));
	CHECK_FALSE(check_netdev_name(std::string(15, 'e')));
	CHECK(check_netdev_name(std::string(16, 'e')));
	CHECK(check_netdev_name("eth0:1"));
	CHECK(check_netdev_name(""));

	CHECK(usage_error({"add", "roce%d", "roce", "eth0"}) ==
	      "add: device name 'roce%d' must not contain '%'");
	CHECK(usage_error({"add", "roce0", "roce", "averyveryverylongname"})
		  .rfind("add roce0: ", 0) == 0);
}

TEST_CASE("tool args: del takes NAME and --force", "[tool]")
{
	auto r = parse({"del", "roce0"});
	REQUIRE(r);
	CHECK(r->command == Command::del);
	CHECK(r->name == "roce0");
	CHECK_FALSE(r->force);

	r = parse({"--force", "del", "roce0"});
	REQUIRE(r);
	CHECK(r->force);

	CHECK(usage_error({"del"}) == "del: expected NAME");
	CHECK(usage_error({"del", "a", "b"}) == "del: expected NAME");
	CHECK(usage_error({"list", "--force"}) == "--force applies to 'del' only");
	CHECK(usage_error({"del", "roce0", "--all"}) ==
	      "--all applies to 'list', 'show' and 'stats' only");
}

TEST_CASE("tool args: help, version, unknown input", "[tool]")
{
	auto r = parse({"--help"});
	REQUIRE(r);
	CHECK(r->command == Command::help);
	// Help wins even over a broken command line.
	r = parse({"add", "x", "bogus", "-h"});
	REQUIRE(r);
	CHECK(r->command == Command::help);

	r = parse({"-V"});
	REQUIRE(r);
	CHECK(r->command == Command::version);
	CHECK(version_text().rfind("softrnic ", 0) == 0);

	CHECK(usage_error({"frobnicate"}) == "unknown command 'frobnicate'");
	CHECK(usage_error({"list", "--jsn"}) == "unknown option '--jsn'");

	// "--" ends options, so a dash-led positional is an argument.
	CHECK(usage_error({"--", "--all"}) == "unknown command '--all'");

	std::string help = usage_text();
	for (auto word :
	     {"list", "show [NAME]", "stats [NAME]", "add NAME type roce|iwarp netdev NETDEV",
	      "add NAME roce|iwarp NETDEV", "del NAME", "--all", "--force", "--json", "--pretty"})
		CHECK(help.find(word) != std::string::npos);
}
