#pragma once
// Internal: the MATCH_RECOGNIZE clause parser (PostgreSQL has no grammar for it). The
// preparse rewriter cuts `MATCH_RECOGNIZE (...) [AS] alias` out of the query text; this
// parses it from the tokens, its expressions (PARTITION BY, ORDER BY, MEASURES, DEFINE)
// through the ExpressionSource so they keep their source positions.
#include "clink/sql/parser/preparse.hpp"

namespace clink::sql::detail {

class TokenCursor;

// The cursor is on MATCH_RECOGNIZE. Parses the clause and the alias after it, returns
// the raw index of the token after them.
size_t parse_match_recognize(TokenCursor& cur, preparse::ExpressionSource& exprs,
                             preparse::Placeholders::MatchRecognizeClause& out);

}  // namespace clink::sql::detail
