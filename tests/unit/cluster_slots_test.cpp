// Cluster routing without a cluster: key slots (Redis's own examples),
// the slot map of a CLUSTER SLOTS reply, and MOVED/ASK replies.
#include "redis/cluster_slots.h"

#include <gtest/gtest.h>

#include "error.h"

namespace rl::redis {
namespace {

Reply integer(int64_t v) {
  Reply r;
  r.type = Reply::Type::integer;
  r.integer = v;
  return r;
}
Reply string(std::string s) {
  Reply r;
  r.type = Reply::Type::string;
  r.text = std::move(s);
  return r;
}
Reply array(std::vector<Reply> elements) {
  Reply r;
  r.type = Reply::Type::array;
  r.elements = std::move(elements);
  return r;
}
Reply node(const std::string& host, int port) {
  return array({string(host), integer(port), string("0123456789abcdef")});
}

TEST(ClusterSlots, KeySlotsAreRedisOwn) {
  // The values CLUSTER KEYSLOT gives.
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("123456789"), 0x31C3 % 16384);  // the CRC16 check value
  EXPECT_EQ(key_slot(""), 0);
}

TEST(ClusterSlots, TheHashTagAloneDecides) {
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("rl:api:{alice}:v1:gcra:10/1000000"), key_slot("alice"));
  // An empty tag is no tag: the whole key counts.
  EXPECT_NE(key_slot("foo{}{bar}"), key_slot("bar"));
  EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
  EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
}

TEST(ClusterSlots, SlotMapFromClusterSlots) {
  const Reply reply = array({
      array({integer(0), integer(5460), node("127.0.0.1", 30001), node("127.0.0.1", 30004)}),
      array({integer(5461), integer(10922), node("127.0.0.1", 30002)}),
      array({integer(10923), integer(16383), node("127.0.0.1", 30003)}),
  });
  const SlotMap map = SlotMap::from_cluster_slots(reply);
  ASSERT_EQ(map.masters().size(), 3u);
  EXPECT_EQ(map.master_for(0)->port, 30001);
  EXPECT_EQ(map.master_for(5460)->port, 30001);
  EXPECT_EQ(map.master_for(5461)->port, 30002);
  EXPECT_EQ(map.master_for(16383)->port, 30003);
  EXPECT_EQ(map.master_for(key_slot("foo"))->port, 30003);
}

TEST(ClusterSlots, AMasterWithSeveralRangesIsOneNodeAndGapsHaveNone) {
  const Reply reply = array({
      array({integer(0), integer(99), node("a", 1)}),
      array({integer(200), integer(299), node("a", 1)}),
  });
  const SlotMap map = SlotMap::from_cluster_slots(reply);
  EXPECT_EQ(map.masters().size(), 1u);
  EXPECT_EQ(map.master_for(250)->host, "a");
  EXPECT_EQ(map.master_for(150), nullptr);
}

TEST(ClusterSlots, MalformedRepliesAreBackendErrors) {
  for (const Reply& bad : {string("x"), array({array({integer(0)})}),
                           array({array({integer(5), integer(1), node("a", 1)})}),
                           array({array({integer(0), integer(16384), node("a", 1)})}),
                           array({array({integer(0), integer(1), node("a", 0)})})}) {
    try {
      SlotMap::from_cluster_slots(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::backend_error);
      EXPECT_EQ(std::string(e.what()).rfind("CLUSTER SLOTS: ", 0), 0u) << e.what();
    }
  }
}

TEST(ClusterSlots, RedirectsAreParsed) {
  auto moved = parse_redirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->kind, Redirect::Kind::moved);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->node, (ClusterNode{"127.0.0.1", 6381}));
  auto ask = parse_redirect("ASK 1 ::1:7000");
  ASSERT_TRUE(ask);
  EXPECT_EQ(ask->kind, Redirect::Kind::ask);
  EXPECT_EQ(ask->node, (ClusterNode{"::1", 7000}));
  auto same_host = parse_redirect("MOVED 2 :7001");
  ASSERT_TRUE(same_host);
  EXPECT_EQ(same_host->node.host, "");
  for (const char* not_one :
       {"ERR x", "MOVED", "MOVED 16384 a:1", "MOVED x a:1", "ASK 1 a", "MOVED 1 a:0", "NOSCRIPT"}) {
    EXPECT_FALSE(parse_redirect(not_one)) << not_one;
  }
}

}  // namespace
}  // namespace rl::redis
