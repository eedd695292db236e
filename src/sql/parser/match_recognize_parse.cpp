// The MATCH_RECOGNIZE clause parser (see match_recognize_parse.hpp). Grammar (Flink's,
// clauses in this order):
//   MATCH_RECOGNIZE ( [PARTITION BY e, ...] [ORDER BY e [ASC|DESC], ...]
//     [MEASURES [FINAL | RUNNING] e [AS] name, ...] [ONE ROW PER MATCH | ALL ROWS PER MATCH]
//     (ALL ROWS PER MATCH is SQL:2016's, a clink extension to Flink's grammar)
//     [AFTER MATCH SKIP {PAST LAST ROW | TO NEXT ROW | TO FIRST v | TO LAST v | TO v}]
//     PATTERN ( term ... ) [WITHIN INTERVAL '...' unit]
//     DEFINE v AS condition, ... ) [AS] alias
#include "match_recognize_parse.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

#include "token_cursor.hpp"

namespace clink::sql::detail {

namespace {

using preparse::ExpressionSource;

class ClauseParser {
 public:
  ClauseParser(const Lexed& lx, const preparse::SourceMap& map, ExpressionSource& exprs)
      : lx_(lx), map_(map), exprs_(exprs) {}

  // [b, e): the tokens between the clause's parentheses.
  ast::MatchRecognize parse(size_t b, size_t e) {
    ast::MatchRecognize mr;
    TokenCursor c(lx_, b, e, map_);
    if (c.accept("PARTITION")) {
      c.expect("BY");
      for (auto [b0, e0] : items(c, {"ORDER", "MEASURES", "ONE", "ALL", "AFTER", "PATTERN"}))
        mr.partition_by.push_back(expression(b0, e0));
    }
    if (c.accept("ORDER")) {
      c.expect("BY");
      for (auto [b0, e0] : items(c, {"MEASURES", "ONE", "ALL", "AFTER", "PATTERN"})) {
        TokenCursor ic(lx_, b0, e0, map_);
        size_t end = ic.find_top_level({"ASC", "DESC"});
        ast::OrderItem o;
        o.pos = ic.position();
        o.expr = expression(b0, end);
        if (end < e0) {
          ic.seek(end);
          o.descending = ic.next().is("DESC");
          if (!ic.at_end()) ic.fail(ic.peek(), "unexpected " + describe(ic.peek()) + " in ORDER BY");
        }
        mr.order_by.push_back(std::move(o));
      }
    }
    if (c.accept("MEASURES")) {
      for (auto [b0, e0] : items(c, {"ONE", "ALL", "AFTER", "PATTERN"})) mr.measures.push_back(measure(b0, e0));
    }
    if (c.accept("ALL")) {
      // ALL ROWS PER MATCH (SQL:2016; Flink 2.3 rejects it): the default SHOW EMPTY
      // MATCHES is moot (a pattern that can match no row is rejected), the other options
      // are not supported.
      c.expect("ROWS");
      c.expect("PER");
      c.expect("MATCH");
      mr.all_rows = true;
      if (c.peek_is("SHOW") || c.peek_is("OMIT") || c.peek_is("WITH")) {
        const Token& at = c.peek();
        std::string option = at.text;
        for (size_t i = 1; i < 3 && c.index_ahead(i) < e; ++i) option += " " + c.peek(i).text;
        c.unsupported(at, "ALL ROWS PER MATCH " + option +
                              " is not supported: the rows of the matches are output (a pattern that can match no "
                              "row is rejected)");
      }
    } else if (c.accept("ONE")) {
      c.expect("ROW");
      c.expect("PER");
      c.expect("MATCH");
    }
    if (running_at_ && !mr.all_rows)
      c.unsupported(tok(*running_at_), "RUNNING measures are not supported: with ONE ROW PER MATCH every measure is FINAL (Flink 2.3 cannot generate code for RUNNING either)");
    if (c.accept("AFTER")) {
      mr.skip_pos = c.position(tok(c.index() - 1));
      c.expect("MATCH");
      c.expect("SKIP");
      if (c.accept("PAST")) {
        c.expect("LAST");
        c.expect("ROW");
      } else {
        c.expect("TO");
        if (c.accept_all({"NEXT", "ROW"})) {
          mr.skip = ast::MatchRecognize::Skip::ToNextRow;
        } else if (c.peek_is("FIRST") && c.peek(1).word() && !c.peek_is("PATTERN", 1)) {
          c.next();
          mr.skip = ast::MatchRecognize::Skip::ToFirst;
          mr.skip_variable = c.identifier("a pattern variable");
        } else {
          // TO LAST v, and TO v (= TO LAST v, as the SQL standard).
          if (c.peek_is("LAST") && c.peek(1).word() && !c.peek_is("PATTERN", 1)) c.next();
          mr.skip = ast::MatchRecognize::Skip::ToLast;
          mr.skip_variable = c.identifier("a pattern variable");
        }
      }
    } else {
      // Without AFTER MATCH, Flink 2.3 skips to the next row (Calcite's default), not past
      // the last row as its documentation says: every match, overlapping ones too.
      mr.skip = ast::MatchRecognize::Skip::ToNextRow;
    }
    mr.pattern_pos = c.position();
    c.expect("PATTERN");
    if (!c.peek_is("(")) c.fail_expected("'('");
    size_t open = c.index_ahead(0);
    size_t close = c.matching_close(open);
    if (close >= e) c.fail(c.peek(), "missing ')' for PATTERN");
    pattern(open + 1, close, mr.pattern);
    if (mr.pattern.empty()) c.fail(tok(close), "PATTERN needs at least one pattern variable");
    c.seek(close + 1);
    if (c.accept("WITHIN")) {
      if (!c.peek_is("INTERVAL")) c.fail_expected("an INTERVAL literal after WITHIN");
      mr.within = parse_interval_literal(c);
    }
    if (!c.peek_is("DEFINE")) c.fail_expected("DEFINE");
    c.next();
    for (auto [b0, e0] : items(c, {})) {
      TokenCursor ic(lx_, b0, e0, map_);
      ast::MatchDefine d;
      d.pos = ic.position();
      d.variable = ic.identifier("a pattern variable");
      ic.expect("AS");
      if (ic.at_end()) ic.fail_expected("a condition");
      if (size_t at = find_semantics_keyword(ic.index_ahead(0), e0); at < e0)
        ic.fail(tok(at), "Cannot use RUNNING/FINAL in DEFINE");
      d.condition = exprs_.parse_expression(lx_, ic.index_ahead(0), e0);
      mr.define.push_back(std::move(d));
    }
    return mr;
  }

 private:
  const Token& tok(size_t i) const { return lx_.tokens[i]; }

  std::optional<size_t> running_at_;  // the first measure written RUNNING

  ast::ExprPtr expression(size_t b, size_t e) {
    TokenCursor c(lx_, b, e, map_);
    if (c.at_end()) c.fail_expected("an expression");
    return exprs_.parse_expression(lx_, c.index_ahead(0), e);
  }

  // `expr [AS] name`: the name is the last token (after AS when written).
  ast::SelectItem measure(size_t b, size_t e) {
    TokenCursor c(lx_, b, e, map_);
    ast::SelectItem item;
    item.pos = c.position();
    size_t as = c.find_top_level({"AS"});
    size_t expr_end = as;
    size_t name_at = as + 1;
    if (as == e) {
      // No AS: the alias is the last token when it is a name following an expression.
      size_t last = e;
      for (size_t i = b; i < e; ++i)
        if (tok(i).kind != TokenKind::Hint) last = i;
      if (last == e || last == c.index_ahead(0) || !tok(last).word() || tok(last - 1).sym("."))
        c.fail(tok(c.index_ahead(0)), "a MEASURES item needs a name: <expression> AS <name>");
      expr_end = last;
      name_at = last;
    }
    // RUNNING / FINAL, before the expression or inside it (1 + FINAL LAST(A.price)).
    // RUNNING, the default of ALL ROWS PER MATCH, goes; FINAL x becomes the call FINAL(x),
    // which the binder reads (and which prints and parses back as itself). ONE ROW PER
    // MATCH computes every measure over the whole match (FINAL), where Flink 2.3 fails
    // generating code for RUNNING: rejected after the ROWS PER MATCH clause.
    std::vector<size_t> keywords;
    for (size_t at = find_semantics_keyword(b, expr_end); at < expr_end; at = find_semantics_keyword(at + 1, expr_end)) {
      if (tok(at).is("RUNNING") && !running_at_) running_at_ = at;
      keywords.push_back(at);
    }
    if (keywords.empty()) {
      item.expr = expression(b, expr_end);
    } else {
      // The expression with RUNNING dropped and FINAL's operand in parentheses (tokens
      // keep their positions; the parentheses are appended to a copy of the text).
      preparse::Lexed rewritten{lx_.text, {}};
      const auto origin = tok(keywords[0]).origin;
      const auto parens = static_cast<uint32_t>(rewritten.text.text.size());
      rewritten.text.append("()", origin);
      auto paren = [&](bool open) {
        Token t;
        t.kind = TokenKind::Symbol;
        t.text = open ? "(" : ")";
        t.begin = parens + (open ? 0 : 1);
        t.end = t.begin + 1;
        t.origin = origin;
        return t;
      };
      std::vector<size_t> closes;  // where a FINAL's operand ends, innermost last
      for (size_t i = b; i < expr_end; ++i) {
        if (std::binary_search(keywords.begin(), keywords.end(), i)) {
          if (tok(i).is("RUNNING")) continue;
          rewritten.tokens.push_back(tok(i));
          rewritten.tokens.push_back(paren(true));
          // FINAL LAST(...) / FINAL COUNT(...): to the ')'; FINAL A.price: the column.
          closes.push_back(tok(i + 2).sym("(") ? c.matching_close(i + 2) : i + 3);
          continue;
        }
        rewritten.tokens.push_back(tok(i));
        while (!closes.empty() && closes.back() == i) {
          rewritten.tokens.push_back(paren(false));
          closes.pop_back();
        }
      }
      if (!closes.empty()) c.fail(tok(keywords[0]), "FINAL needs a navigation, an aggregate or a pattern column after it");
      if (rewritten.tokens.empty()) c.fail_expected("an expression");
      item.expr = exprs_.parse_expression(rewritten, 0, rewritten.tokens.size());
    }
    TokenCursor nc(lx_, name_at, e, map_);
    item.alias = nc.identifier("a measure name");
    if (!nc.at_end()) nc.fail(nc.peek(), "unexpected " + describe(nc.peek()) + " after the measure name");
    return item;
  }

  // The first FINAL / RUNNING in [b, e) that qualifies a navigation or an aggregate (the
  // word before `LAST(`, `A.price`, ...; not a column called final), else e.
  size_t find_semantics_keyword(size_t b, size_t e) const {
    for (size_t i = b; i + 1 < e; ++i) {
      const Token& t = tok(i);
      if (!(t.is("FINAL") || t.is("RUNNING")) || !tok(i + 1).word()) continue;
      if (i > b && tok(i - 1).sym(".")) continue;
      if (i + 2 < e && (tok(i + 2).sym("(") || tok(i + 2).sym("."))) return i;
      if (i + 2 == e) return i;
    }
    return e;
  }

  // Comma-separated items [begin, end) from the cursor up to the first top-level keyword
  // in `stops` (or the range's end); the cursor moves there.
  std::vector<std::pair<size_t, size_t>> items(TokenCursor& c, std::initializer_list<std::string_view> stops) {
    size_t section_end = c.find_top_level(stops);
    std::vector<std::pair<size_t, size_t>> out;
    size_t i = c.index_ahead(0);
    if (i >= section_end) c.fail_expected("a list item");
    while (i < section_end) {
      TokenCursor r(lx_, i, section_end, map_);
      size_t comma = r.find_top_level({","});
      if (comma == i) r.fail(tok(comma), "expected an item before ','");
      out.emplace_back(i, comma);
      if (comma < section_end && comma + 1 >= section_end) r.fail(tok(comma), "expected an item after ','");
      i = comma + 1;
    }
    c.seek(section_end);
    return out;
  }

  void pattern(size_t b, size_t e, std::vector<ast::MatchPatternTerm>& out) {
    TokenCursor c(lx_, b, e, map_);
    while (!c.at_end()) {
      const Token& t = c.peek();
      if (t.sym("(")) {
        size_t open = c.index_ahead(0);
        size_t close = c.matching_close(open);
        TokenCursor after(lx_, close + 1, e, map_);
        if (!after.at_end() && is_quantifier_start(after.peek()))
          c.unsupported(t, "Group patterns are not supported yet: a quantifier applies to a single pattern variable");
        pattern(open + 1, close, out);
        c.seek(close + 1);
        continue;
      }
      if (t.sym("|")) c.unsupported(t, "Currently, CEP doesn't support branching patterns (alternation '|').");
      if (t.sym("{") && c.peek_is("-", 1)) c.unsupported(t, "Currently, CEP doesn't support '{-' '-}' patterns.");
      if (t.is("PERMUTE")) c.unsupported(t, "Currently, CEP doesn't support PERMUTE patterns.");
      if (!t.word()) c.fail(t, "unexpected " + describe(t) + " in PATTERN (expected a pattern variable)");
      ast::MatchPatternTerm term;
      term.pos = c.position();
      term.variable = t.value;
      c.next();
      quantifier(c, term);
      out.push_back(std::move(term));
    }
  }

  static bool is_quantifier_start(const Token& t) { return t.sym("*") || t.sym("+") || t.sym("?") || t.sym("{"); }

  void quantifier(TokenCursor& c, ast::MatchPatternTerm& term) {
    size_t first = c.index_ahead(0);
    if (c.accept("*")) {
      term.min = 0;
      term.max = -1;
    } else if (c.accept("+")) {
      term.min = 1;
      term.max = -1;
    } else if (c.accept("?")) {
      term.min = 0;
      term.max = 1;
    } else if (c.peek_is("{")) {
      c.next();
      term.min = bound(c);
      if (c.accept(",")) {
        term.max = c.peek_is("}") ? -1 : bound(c);
      } else {
        term.max = term.min;
      }
      c.expect("}");
      if (term.max != -1 && term.max < term.min)
        c.fail(tok(first), "the quantifier's upper bound " + std::to_string(term.max) + " is below its lower bound " +
                               std::to_string(term.min));
      if (term.max == 0) c.fail(tok(first), "a quantifier {0} matches nothing");
    } else {
      return;
    }
    if (c.accept("?")) term.reluctant = true;
    size_t end = c.index_ahead(0);
    for (size_t i = first; i < end; ++i) term.quantifier += tok(i).text;
  }

  int bound(TokenCursor& c) {
    const Token& t = c.peek();
    if (t.kind != TokenKind::Number || t.text.find_first_not_of("0123456789") != std::string::npos)
      c.fail_expected("a non-negative integer");
    if (t.text.size() > 9) c.fail(t, "the quantifier bound " + t.text + " is too large");
    return c.integer("a non-negative integer");
  }

  const Lexed& lx_;
  const preparse::SourceMap& map_;
  ExpressionSource& exprs_;
};

}  // namespace

size_t parse_match_recognize(TokenCursor& cur, preparse::ExpressionSource& exprs,
                             preparse::Placeholders::MatchRecognizeClause& out) {
  const Token& kw = cur.next();
  out.pos = cur.position(kw);
  if (!cur.peek_is("(")) cur.fail_expected("'(' after MATCH_RECOGNIZE");
  size_t open = cur.index_ahead(0);
  size_t close = cur.matching_close(open);
  if (close >= cur.end_index()) cur.fail(cur.peek(), "missing ')' for MATCH_RECOGNIZE");
  ClauseParser parser(cur.lexed(), cur.map(), exprs);
  out.clause = parser.parse(open + 1, close);
  cur.seek(close + 1);
  if (cur.accept("AS")) {
    out.alias = cur.identifier("an alias");
  } else if (!cur.at_end() && cur.peek().word() && !preparse::is_reserved_keyword(cur.peek().text)) {
    out.alias = cur.identifier("an alias");
  }
  return cur.index_ahead(0);
}

}  // namespace clink::sql::detail
