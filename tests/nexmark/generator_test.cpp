// The generator against Nexmark's Java code: the reference lines and checksums were
// produced by running nexmark-flink's generator classes (Random seeded with each event
// id, firstEventId = firstEventNumber = 1, one generator, baseTime 1600000000000) on a
// JVM; java.util.Random values by Java 17.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "clink/core/java_random.hpp"
#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/core/error.hpp"
#include "nexmark_test_util.hpp"

namespace clink::test {

using namespace clink::nexmark;

namespace {

TEST(JavaRandom, MatchesJavaUtilRandom) {
  JavaRandom r(42);
  EXPECT_EQ(r.next_int(), -1170105035);
  EXPECT_EQ(r.next_int(10), 3);
  EXPECT_EQ(r.next_int(1000000007), 467211241);  // large bound: the rejection loop's overflow test
  EXPECT_EQ(r.next_int(64), 3);                  // power of two: the multiply-shift path
  EXPECT_EQ(r.next_long(), 5694868678511409995LL);
  EXPECT_EQ(r.next_double(), 0.27707849007413665);
  JavaRandom s(-7);
  EXPECT_EQ(s.next_int(13), 6);
  EXPECT_EQ(s.next_int(26), 7);
  EXPECT_EQ(s.next_long(), -6028743012628894217LL);
  EXPECT_EQ(s.next_double(), 0.5214896372918163);
}

TEST(NexmarkGenerator, FirstEventsEqualNexmarksJavaGenerator) {
  NexmarkGenerator g(config_at());
  std::vector<std::string> expected = {
      R"(A|1001|z ck w|cwlachrnkfzkygsu edjytotggvasbt z yjjszhhsqtrgzblkaolzkhlldqedvgj fdbvswemnzshmwipqrzqfkd|25626290|28805847|1600000000000|1600000000202|1000|12|jzlkehMZPLIIwtopffS\KHLRhdduqtifpeko`KO`ZQK[[_I`H[aTINQKQJMPTYYLOYitqbesrjqlgtpwxmaisefjioILP`OSWQSKaY_LZV]MSPTILLgyacoodbfiyyWWK_NKetfdja`HUNP^uwfvxlyvywsaL^KN\[myznhx^O_JRShcfzvf]O`NJ\ctudjuorfgrhhpmxquKXXQLPbirsklX[aY\YUJ[WR\L_SXW_YHM\HPwvmlopNNVJVWlmtrikTIUaUaZO]^XTIYK`R]iobqufV`PSJ_wfivocSWSaTUaWU_[^kohfsnQSTVVaI)",
      R"(A|1002|gxycmhtobprpd|ybjpocsabdbtiqzhbupw ihlxbsqjkmp lbupz bcqnghg fojwfqs|267|422398|1600000000000|1600000000001|1000|10|JKSLMTmulfbwHKXUXSztthwgwcilixpeyzjs^`RK^RutzkvkSILV]Srsjtomlebedl_HQ_\S]I[`H]ywaawvTWIPI\[aKRR\_H\VONnznhbyUIaP^V\NSJ\XznlkqxadbnbdXKZPTVdpaxvmeuptpyrgetseedsfgaKT\JPYdxwjsgpdvnmxampjcr]\`^KYfxuiihlzdqdtglvgflZWSXVXeypjmxJUT_ONerzgyecnattpwjdmszkkwcucgmxpov`\[WUYUTaWNQNIM^SWWVXK_IuskbngavgqooxvfbobmkwsxrtmwtyycvbwjpVHPQIT]LNXSLQL^]KLRPU`LVjkyjlrhlcdctlrnulpSS[aWTQ^QTMVSPVSKOpdhxcwOK[YMLiasswo]K_WURbnvmp)",
      R"(B|1000|1001|32530001|Google|https://www.nexmark.com/xnhd/xcat/bwmn/item.htm?query=1|1600000000000|sbolvyqwgticfdrwdyiyofziYMU\Z`UaTQO][NX\RM]WPYTOuwogvszlx)",
      R"(B|1000|1009|468715|Facebook|https://www.nexmark.com/_jyw/rnmg/bo_e/item.htm?query=1|1600000000000|euyfegsyumoyP[P_Z\XIMVVVxctqkwvurozuRWZ`MYaYVW][cjupgbckseelPM`aM_OOK[`NQ)",
      R"(B|1000|1001|300435|Apple|https://www.nexmark.com/mqvj/ycmh/zpsh/item.htm?query=1|1600000000000|mwyooulzilesQV_`]aPRWLaUtndhbtXXTTUXVJa_[_YXVJHVmidxhturdym)",
      R"(B|1000|1001|3126206|channel-6254|https://www.nexmark.com/pjdp/qse/cykn/item.htm?query=1&channel_id=1981284352|1600000000000|KUUY`RJaVNU`^QIWNHgdvnfxZQ]H_PbustqrpqasinNX`Q[_YKKNP\woaecePJPO[X)",
      R"(B|1000|1001|381373|channel-9158|https://www.nexmark.com/o_gl/jsh/swk/item.htm?query=1&channel_id=1673789440|1600000000000|gmsejhHYJQY^dlgjuzOJJXTIknsmohhrndveLW`UZ\LV^\S\UIHPQ\jalhaxxypno)",
      R"(B|1000|1001|3968405|Apple|https://www.nexmark.com/mqvj/ycmh/zpsh/item.htm?query=1|1600000000000|_JOO[_UV\]THpgkzeagvhzskkjkgkx\^O[SPQMVX\T\UNJMLquliwsm)",
      R"(B|1000|1001|3522|channel-1456|https://www.nexmark.com/yqy/skv_/cfef/item.htm?query=1&channel_id=228589568|1600000000000|zgdicd\[LIUTeuyczygmogzdW_^ORLRPUNIH`ROYIUHWJNaHclaqisegrvvzaprhqwI)",
      R"(B|1000|1001|36651|Facebook|https://www.nexmark.com/_jyw/rnmg/bo_e/item.htm?query=1|1600000000001|X_YRT[jrwniqrpctjzhhiyspV[VIN\ultnebazilqcWVTUZRONHaP[hdob)",
      R"(B|1000|1000|2074|channel-4750|https://www.nexmark.com/tjhe/cjjj/ckbj/item.htm?query=1&channel_id=1900544000|1600000000001|hjkqmoH[]]RIfebsmrhxlnxsbjoxioqxghakkkwpxeKL_HR[_XTU^[YZTaRUQNa]YTK]`VM[I)",
      R"(B|1000|1001|46524|channel-5710|https://www.nexmark.com/krs_/yxkc/d_i/item.htm?query=1&channel_id=1919418368|1600000000001|mnlahgvgcdisTVaS]IhzujgdM[KO[PUVPUaY[U^QJJakgxqogxibxrHVQ[SZW_S)",
  };
  for (std::size_t n = 0; n < expected.size(); ++n) EXPECT_EQ(pipe_line(g.event(static_cast<std::int64_t>(n))), expected[n]) << n;
  // The first two people (ids 50 and 100: positions 48 and 98).
  EXPECT_EQ(pipe_line(g.event(48)),
            R"(P|1001|Sarah Smith|f  y@yumv.com|0892 2755 1923 0591|Los Angeles|ID|1600000000004|`RT]WInnxtneWPLPHOywusizasixbmVVHKO_Y_MOYPmoftdguqtxkyXPO_ZNYMaKVQ\``OOXTNOWIKUOLIaWQN\H[_cihasyNLOMHLVHKVRIznfdmdeqqvumRMZYKKNRJ[K^IIN`RJM`H[^^vbqrxduih)");
  EXPECT_EQ(pipe_line(g.event(98)),
            R"(P|1002|Saul Abrams|ved@prha.com|2773 1119 8653 0428|Bend|WA|1600000000009|ocdrufzegtsvmajjshzcblsngbukpeJQZ]PHQ`QLXT[RNWVIinudhsPN[KQHHTQRSJzjztscSNHL_^sjgowrulowhgrfhyjtTPWRHSlcawqzWUULHN\M^_O\kpnqkoJJYJ`NUVUL_ZrwqcstaiwehgaijuzcXH`ZL[ezecskLLO^)");
}

TEST(NexmarkGenerator, AnyPositionDirectlyEqualsNexmark) {
  NexmarkGenerator g(config_at());
  EXPECT_EQ(pipe_line(g.event(123456789)),
            R"(B|7408400|2469962|824295|Facebook|https://www.nexmark.com/_jyw/rnmg/bo_e/item.htm?query=1|1600012345679|ueeridX[W`TIsdfqye\L^PJZbtpzblX]\QK`TaL\KKivosjr_ZOWOZoafsqtzzxzyoopwea)");
  EXPECT_EQ(pipe_line(g.event(123456790)),
            R"(B|7408400|2470101|62159833|channel-2755|https://www.nexmark.com/_cax/kayt/enbk/item.htm?query=1&channel_id=1018167296|1600012345679|ajfamsY^Y[TIxuusabqayjsgnitutqhqkjgyM\ZMUMhvowixetlukrlessflMaHOa`opnelh_^Pa)");
  EXPECT_EQ(pipe_line(g.event(123456792)),
            R"(B|7408400|2469748|217|Baidu|https://www.nexmark.com/arin/yawv/wlac/item.htm?query=1|1600012345679|mztlirydnmfarmyisloqjhcllhkmmtHXIQ^_dwuhwdwealxrgkygbojpcbbcde)");
}

// Every field of 200000 and 2000000 events (and, below, of 100000 shuffled ones at 1 event/s),
// hashed as Java hashes the same lines.
TEST(NexmarkGenerator, ChecksumOverManyEventsEqualsNexmark) {
  EXPECT_EQ(java_checksum(NexmarkGenerator(config_at()), 200000), -3125600932929346386LL);
  EXPECT_EQ(java_checksum(NexmarkGenerator(config_at()), 2000000), -1684535397173016518LL);
  GeneratorConfig c = config_at();
  c.out_of_order_group_size = 1000;
  c.first_event_rate = 1;
  EXPECT_EQ(java_checksum(NexmarkGenerator(c), 100000), -3274466829419622353LL);
}

// Every non-default knob at once (proportions 3:7:13, hot ratios 3, 5, 7 that are not
// powers of two, 37 auctions in flight, 55 active people, sizes 333/1200/45 bytes),
// from the start and from position 1000000 with out-of-order groups of 7 at 333/s.
TEST(NexmarkGenerator, ChecksumWithEveryKnobChangedEqualsNexmark) {
  GeneratorConfig c = config_at();
  c.person_proportion = 3;
  c.auction_proportion = 7;
  c.bid_proportion = 13;
  c.hot_auction_ratio = 3;
  c.hot_sellers_ratio = 5;
  c.hot_bidders_ratio = 7;
  c.num_in_flight_auctions = 37;
  c.num_active_people = 55;
  c.avg_person_byte_size = 333;
  c.avg_auction_byte_size = 1200;
  c.avg_bid_byte_size = 45;
  EXPECT_EQ(java_checksum(NexmarkGenerator(c), 300000), -6095982703694325193LL);
  c.out_of_order_group_size = 7;
  c.first_event_rate = 333;
  NexmarkGenerator g(c);
  std::uint64_t sum = 0;
  for (std::int64_t n = 1000000; n < 1300000; ++n)
    sum = sum * 31 + static_cast<std::uint64_t>(static_cast<std::int64_t>(java_string_hash(pipe_line(g.event(n)))));
  EXPECT_EQ(static_cast<std::int64_t>(sum), -6996352384437951179LL);
}

// Without channel and url, bids draw as Nexmark's releases before those fields did.
TEST(NexmarkGenerator, WithoutChannelAndUrlBidsEqualNexmarksEarlierModel) {
  GeneratorConfig c = config_at();
  c.bid_channel_url = false;
  NexmarkGenerator g(c);
  EXPECT_EQ(pipe_line(g.event(2)),
            R"(B|1000|1001|32530001|||1600000000000|fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\Z`UaTQO][NX\RM]WPYTOuwogvszlxjrcNOORM)");
  EXPECT_EQ(pipe_line(g.event(4)),
            R"(B|1000|1001|300435|||1600000000000|H]ITTZpgivopmwyooulzilesQV_`]aPRWLaUtndhbtXXTTUXVJa_[_YXVJHVmidxhturdym)");
  EXPECT_EQ(java_checksum(g, 300000), -2473213977953711882LL);
}

// Drawing an event only up to a field leaves the fields drawn before it exactly as the
// full event's (and those after it empty), so a query reading fewer fields sees the same
// values.
TEST(NexmarkGenerator, DrawsUpToAFieldGiveThatFieldAndTheEarlierOnesUnchanged) {
  const NexmarkGenerator full(config_at());
  auto with = [](NexmarkDraws d) {
    GeneratorConfig c = config_at();
    c.draws = d;
    return NexmarkGenerator(c);
  };
  const NexmarkGenerator bids_to_price = with({PersonDraws::kAll, AuctionDraws::kAll, BidDraws::kPrice});
  const NexmarkGenerator bids_to_channel = with({PersonDraws::kAll, AuctionDraws::kAll, BidDraws::kChannel});
  const NexmarkGenerator none = with({PersonDraws::kNone, AuctionDraws::kNone, BidDraws::kNone});
  const NexmarkGenerator auctions_to_category = with({PersonDraws::kCity, AuctionDraws::kCategory, BidDraws::kAll});
  int bids = 0, auctions = 0, people = 0;
  for (std::int64_t n = 0; n < 5000; ++n) {
    const NexmarkEvent e = full.event(n);
    SCOPED_TRACE(n);
    if (e.type == NexmarkEventType::kBid) {
      ++bids;
      const NexmarkEvent p = bids_to_price.event(n);
      EXPECT_EQ(p.bid.auction, e.bid.auction);
      EXPECT_EQ(p.bid.bidder, e.bid.bidder);
      EXPECT_EQ(p.bid.price, e.bid.price);
      EXPECT_EQ(p.bid.date_time, e.bid.date_time);
      EXPECT_TRUE(p.bid.channel.empty() && p.bid.url.empty() && p.bid.extra.size() == 0);
      const NexmarkEvent c = bids_to_channel.event(n);
      EXPECT_EQ(c.bid.channel, e.bid.channel);
      EXPECT_EQ(c.bid.url, e.bid.url);
      EXPECT_EQ(c.bid.extra.size(), 0u);
      const NexmarkEvent z = none.event(n);
      EXPECT_EQ(z.bid.date_time, e.bid.date_time);
      EXPECT_EQ(z.bid.auction, 0);
      EXPECT_EQ(auctions_to_category.event(n), e);  // bids drawn whole
    } else if (e.type == NexmarkEventType::kAuction) {
      ++auctions;
      const NexmarkEvent a = auctions_to_category.event(n);
      EXPECT_EQ(a.auction.id, e.auction.id);
      EXPECT_EQ(a.auction.seller, e.auction.seller);
      EXPECT_EQ(a.auction.category, e.auction.category);
      EXPECT_EQ(a.auction.date_time, e.auction.date_time);
      EXPECT_EQ(a.auction.initial_bid, 0);
      EXPECT_EQ(a.auction.item_name.size, 0);
      EXPECT_EQ(none.event(n).auction.id, e.auction.id);
      EXPECT_EQ(bids_to_price.event(n), e);  // auctions drawn whole
    } else {
      ++people;
      const NexmarkEvent p = auctions_to_category.event(n);
      EXPECT_EQ(p.person.id, e.person.id);
      EXPECT_EQ(p.person.name, e.person.name);
      EXPECT_EQ(p.person.email_address, e.person.email_address);
      EXPECT_EQ(p.person.credit_card, e.person.credit_card);
      EXPECT_EQ(p.person.city, e.person.city);
      EXPECT_TRUE(p.person.state.empty());
      EXPECT_EQ(p.person.extra.size(), 0u);
      EXPECT_EQ(none.event(n).person.date_time, e.person.date_time);
    }
  }
  EXPECT_EQ(bids + auctions + people, 5000);
  EXPECT_GT(people, 0);
}

TEST(NexmarkGenerator, ProportionsAndTypeOrderOverFiftyEvents) {
  NexmarkGenerator g(config_at());
  // Event ids are 2..51: id % 50 == 0 is the person, 1..3 auctions, the rest bids.
  std::string types;
  std::map<NexmarkEventType, int> count;
  for (int n = 0; n < 50; ++n) {
    auto e = g.event(n);
    types += "PAB"[static_cast<int>(e.type)];
    ++count[e.type];
  }
  EXPECT_EQ(types, "AA" + std::string(46, 'B') + "PA");
  EXPECT_EQ(count[NexmarkEventType::kPerson], 1);
  EXPECT_EQ(count[NexmarkEventType::kAuction], 3);
  EXPECT_EQ(count[NexmarkEventType::kBid], 46);

  GeneratorConfig c = config_at();
  c.person_proportion = 2;
  c.auction_proportion = 3;
  c.bid_proportion = 5;  // ids 2..11: id % 10 in {0,1} person, {2,3,4} auction
  NexmarkGenerator h(c);
  types.clear();
  for (int n = 0; n < 10; ++n) types += "PAB"[static_cast<int>(h.event(n).type)];
  EXPECT_EQ(types, "AAABBBBBPP");
}

TEST(NexmarkGenerator, IdsFollowNexmarksArithmetic) {
  NexmarkGenerator g(config_at());
  // Person ids count people, auction ids auctions, both from 1000; bids point at the
  // hot auction/bidder of their batch of 100 (or a recent one) and never at the future
  // beyond Nexmark's lead of 10.
  std::int64_t last_person = 0, last_auction = 0;
  for (std::int64_t n = 0; n < 50000; ++n) {
    auto e = g.event(n);
    std::int64_t id = g.config().event_id(n);
    if (e.type == NexmarkEventType::kPerson) {
      EXPECT_EQ(e.person.id, 1000 + id / 50);
      last_person = e.person.id;
    } else if (e.type == NexmarkEventType::kAuction) {
      EXPECT_EQ(e.auction.id, 1000 + id / 50 * 3 + id % 50 - 1);
      EXPECT_GE(e.auction.category, 10);
      EXPECT_LE(e.auction.category, 14);
      EXPECT_LE(e.auction.seller, std::max<std::int64_t>(last_person, 1000) + 10);
      EXPECT_GT(e.auction.expires, e.auction.date_time);
      EXPECT_GE(e.auction.reserve, e.auction.initial_bid);
      last_auction = e.auction.id;
    } else {
      EXPECT_LE(e.bid.auction, last_auction + 10);
      EXPECT_GE(e.bid.auction, std::max<std::int64_t>(1000, last_auction - 100));
      EXPECT_LE(e.bid.bidder, std::max<std::int64_t>(last_person, 1000) + 10);
    }
  }
  EXPECT_EQ(last_person, 1000 + 50000 / 50);
  EXPECT_EQ(last_base0_person_id(g.config(), 149), 2);
  EXPECT_EQ(last_base0_auction_id(g.config(), 150), 8);   // a person: the previous epoch's last auction
  EXPECT_EQ(last_base0_auction_id(g.config(), 152), 10);  // an auction: its own
  EXPECT_EQ(last_base0_auction_id(g.config(), 199), 11);  // a bid: its epoch's last
}

TEST(NexmarkGenerator, TimestampsFromTheInterEventDelay) {
  GeneratorConfig c = config_at(1000);
  c.first_event_rate = 3000;  // 333.33 us apart; event number k at base + floor(k * 333.33 / 1000)
  NexmarkGenerator g(c);
  std::vector<std::int64_t> ts;
  for (int n = 0; n < 10; ++n) ts.push_back(g.timestamp(n));
  EXPECT_EQ(ts, (std::vector<std::int64_t>{1000, 1000, 1001, 1001, 1001, 1002, 1002, 1002, 1003, 1003}));
  for (int n = 0; n < 10; ++n) EXPECT_EQ(g.event(n).date_time(), ts[static_cast<std::size_t>(n)]);
  c.first_event_rate = 2;  // 500 ms apart
  EXPECT_EQ(NexmarkGenerator(c).timestamp(4), 1000 + 5 * 500);
}

TEST(NexmarkGenerator, OutOfOrderGroupsShuffleIdsAndTimesWithinAGroup) {
  GeneratorConfig c = config_at(0);
  c.out_of_order_group_size = 5;
  c.first_event_rate = 1000;  // 1 ms apart
  NexmarkGenerator g(c);
  // Event number k (= n + 1) becomes (k / 5) * 5 + (k * 953) % 5; ids are 1 + that.
  std::vector<std::int64_t> ids, times, marks;
  for (int n = 0; n < 10; ++n) {
    ids.push_back(c.event_id(n));
    times.push_back(g.event(n).date_time());
    marks.push_back(g.watermark(n));
  }
  EXPECT_EQ(ids, (std::vector<std::int64_t>{4, 2, 5, 3, 6, 9, 7, 10, 8, 11}));
  EXPECT_EQ(times, (std::vector<std::int64_t>{3, 1, 4, 2, 5, 8, 6, 9, 7, 10}));
  EXPECT_EQ(marks, (std::vector<std::int64_t>{0, 0, 0, 0, 5, 5, 5, 5, 5, 10}));
}

TEST(NexmarkGenerator, ExtraSizesAverageToTheConfiguredEventSizes) {
  GeneratorConfig c = config_at();
  NexmarkGenerator g(c);
  std::map<NexmarkEventType, std::pair<std::int64_t, std::int64_t>> total;  // bytes, events
  std::uint32_t bid_min = 1000, bid_max = 0;
  for (std::int64_t n = 0; n < 100000; ++n) {
    auto e = g.event(n);
    std::int64_t size = e.extra().size();
    if (e.type == NexmarkEventType::kPerson) {
      const auto& p = e.person;
      size += 8 + static_cast<std::int64_t>(p.name.size() + p.email_address.size + p.credit_card.size +
                                            p.city.size() + p.state.size());
    } else if (e.type == NexmarkEventType::kAuction) {
      size += 8 + e.auction.item_name.size + e.auction.description.size + 40;
    } else {
      size += 32;
      bid_min = std::min(bid_min, e.bid.extra.length);
      bid_max = std::max(bid_max, e.bid.extra.length);
    }
    EXPECT_EQ(e.extra().str().size(), e.extra().size());
    total[e.type].first += size;
    ++total[e.type].second;
  }
  // Bids: 68 chars wanted, delta round(13.6) = 14: 54 + nextInt(28).
  EXPECT_EQ(bid_min, 54u);
  EXPECT_EQ(bid_max, 81u);
  auto average = [&](NexmarkEventType t) { return static_cast<double>(total[t].first) / total[t].second; };
  EXPECT_NEAR(average(NexmarkEventType::kBid), 99.5, 0.5);  // minSize + (2 delta - 1) / 2
  EXPECT_NEAR(average(NexmarkEventType::kPerson), 200, 2);
  EXPECT_NEAR(average(NexmarkEventType::kAuction), 500, 3);

  c.avg_bid_byte_size = 20;  // below the bid's own 32 bytes: no extra
  EXPECT_EQ(NexmarkGenerator(c).event(5).bid.extra.size(), 0u);
  c.avg_bid_byte_size = 1032;  // 1000 wanted, delta 200: 800..1199
  auto big = NexmarkGenerator(c).event(5).bid.extra;
  EXPECT_GE(big.size(), 800u);
  EXPECT_LT(big.size(), 1200u);
}

TEST(NexmarkGenerator, ExtraMaterialisesNexmarksExactStringAndComparesByContent) {
  NexmarkExtra a{JavaRandom(42).state(), 8};
  // nextExactString from new Random(42): nextInt() = -1170105035 gives six chars
  // 'a' + rnd % 26 (rnd /= 26 each time), then the next nextInt() two more.
  std::string expected;
  std::int32_t rnd = -1170105035;
  for (int i = 0; i < 6; ++i, rnd /= 26) expected += static_cast<char>('a' + rnd % 26);
  JavaRandom r(42);
  r.next_int();
  rnd = r.next_int();
  for (int i = 0; i < 2; ++i, rnd /= 26) expected += static_cast<char>('a' + rnd % 26);
  EXPECT_EQ(a.str(), expected);
  EXPECT_EQ(expected, "LRaSUMpw");  // Java: nextExactString(new Random(42), 8)
  std::string s = "x";
  a.append_to(s);
  EXPECT_EQ(s, "x" + expected);
  EXPECT_EQ(a, (NexmarkExtra{a.random_state, 8}));
  EXPECT_NE(a, (NexmarkExtra{a.random_state, 7}));
  EXPECT_EQ((NexmarkExtra{1, 0}), (NexmarkExtra{2, 0}));  // both empty
}

TEST(NexmarkGenerator, TextForm) {
  NexmarkGenerator g(config_at());
  EXPECT_EQ(to_string(g.event(2)),
            "Bid{auction=1000, bidder=1001, price=32530001, channel=Google, "
            "url=https://www.nexmark.com/xnhd/xcat/bwmn/item.htm?query=1, dateTime=1600000000000, "
            "extra=sbolvyqwgticfdrwdyiyofziYMU\\Z`UaTQO][NX\\RM]WPYTOuwogvszlx}");
  std::string expected_person =
            "Person{id=1001, name=Sarah Smith, emailAddress=f  y@yumv.com, creditCard=0892 2755 1923 0591, city=Los "
            "Angeles, state=ID, dateTime=1600000000004, extra=`RT]W";
  EXPECT_EQ(to_string(g.event(48)).substr(0, expected_person.size()), expected_person);
  EXPECT_EQ(to_string(g.event(1)).substr(0, 60), "Auction{id=1002, itemName=gxycmhtobprpd, description=ybjpocs");
  EXPECT_TRUE(g.event(7) == g.event(7));
  EXPECT_FALSE(g.event(7) == g.event(8));
  EXPECT_EQ(type_name<NexmarkEvent>(), "nexmark_event");
}

TEST(NexmarkGenerator, InvalidConfigsAreRejectedNamingTheOption) {
  auto error = [](GeneratorConfig c) -> std::string {
    try {
      NexmarkGenerator g(c);
    } catch (const ClinkError& e) {
      return e.what();
    }
    return "no error";
  };
  GeneratorConfig c = config_at();
  c.bid_proportion = 0;
  EXPECT_EQ(error(c), "nexmark: bid.proportion must be positive, got 0");
  c = config_at();
  c.first_event_rate = -5;
  EXPECT_EQ(error(c), "nexmark: first-event.rate must be positive, got -5");
  c = config_at();
  c.out_of_order_group_size = 0;
  EXPECT_EQ(error(c), "nexmark: events.out-of-order.group-size must be positive, got 0");
  c = config_at();
  c.num_events = -1;
  EXPECT_EQ(error(c), "nexmark: events.num must not be negative, got -1");
}

TEST(NexmarkGenerator, MaxEventsIsEventsNumOrNexmarksBound) {
  GeneratorConfig c = config_at();
  EXPECT_EQ(NexmarkGenerator(c).max_events(), std::numeric_limits<std::int64_t>::max() / (50 * 500));
  c.num_events = 77;
  EXPECT_EQ(NexmarkGenerator(c).max_events(), 77);
}

}  // namespace
}  // namespace clink::test

namespace clink::test {
namespace {

// The exp2 fast path decides a price only when pow would round the same way.
TEST(NexmarkGenerator, PricesEqualPowOnTwoMillionDraws) {
  JavaRandom r(2024);
  int mismatches = 0;
  for (int i = 0; i < 2000000; ++i) {
    double u = r.next_double();
    double y = std::pow(10.0, u * 6.0) * 100.0;
    auto whole = static_cast<std::int64_t>(y);
    std::int64_t expected = whole + (y - static_cast<double>(whole) >= 0.5 ? 1 : 0);
    mismatches += price_from_unit(u) != expected;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(price_from_unit(0.0), 100);
  EXPECT_EQ(price_from_unit(0.5), 100000);
  // 10^(6u) * 100 = 250.5 exactly is not representable; a value at a tie: u with
  // 10^(6u) * 100 within 1e-13 of k + 0.5 takes the pow path and still rounds as pow.
  double u_tie = std::log10(2.505) / 6.0;
  EXPECT_EQ(price_from_unit(u_tie), static_cast<std::int64_t>(std::floor(std::pow(10.0, u_tie * 6.0) * 100.0 + 0.5)));
}

}  // namespace
}  // namespace clink::test
