// CREATE [OR REPLACE] [TEMPORARY] AGGREGATE [IF NOT EXISTS] name(TYPE, ...)
//   (language = 'wasm', module = '<path.wasm>', result_type = '<sql type>' [, export = '<prefix>'])
// PostgreSQL's aggregate grammar (a definition list of key = value) carrying a
// WebAssembly aggregate; it becomes a CreateFunction whose language marks the aggregate
// (catalog_ddl_wasm.cpp), parameters unnamed.
#include "statement_parser.hpp"

namespace clink::sql::detail {

using namespace ast;

Statement::Node StatementParser::create_aggregate(TokenCursor& c, bool temporary, bool or_replace) {
  c.expect("AGGREGATE");
  CreateFunction f;
  f.temporary = temporary;
  f.or_replace = or_replace;
  f.if_not_exists = c.accept_all({"IF", "NOT", "EXISTS"});
  f.name = c.qualified_name("an aggregate name");
  c.expect("(");
  f.has_params = true;
  if (!c.accept(")")) {
    do {
      FunctionParam p;
      p.pos = c.position();
      p.type = parse_type(c);
      f.params.push_back(std::move(p));
    } while (c.accept(","));
    c.expect(")");
  }
  c.expect("(");
  std::string language, module, result_type, export_name;
  SourcePosition module_pos, result_pos;
  do {
    const Token& key_token = c.peek();
    std::string key = upper_case(c.identifier("an option name (language, module, result_type, export)"));
    c.expect("=");
    SourcePosition value_pos = c.position();
    std::string value = c.string_literal("a quoted option value");
    if (key == "LANGUAGE") language = upper_case(value);
    else if (key == "MODULE") module = value, module_pos = value_pos;
    else if (key == "RESULT_TYPE") result_type = value, result_pos = value_pos;
    else if (key == "EXPORT") export_name = value;
    else c.fail(key_token, "unknown CREATE AGGREGATE option " + describe(key_token) +
                               " (expected language, module, result_type or export)");
  } while (c.accept(","));
  const Token& close = c.expect(")");
  if (language != "WASM") c.fail(close, "CREATE AGGREGATE needs language = 'wasm' (the only aggregate language)");
  if (module.empty()) c.fail(close, "CREATE AGGREGATE needs module = '<path to the .wasm module>'");
  if (result_type.empty()) c.fail(close, "CREATE AGGREGATE needs result_type = '<sql type>'");
  f.language = "WASM AGGREGATE";
  f.definitions_pos = module_pos;
  f.definitions.push_back(module);
  if (!export_name.empty()) f.definitions.push_back(export_name);
  // The result type's text, parsed as a type with positions inside the literal.
  preparse::MappedText text;
  text.origin = {0};
  text.append(result_type, 0);
  preparse::Lexed inner = preparse::tokenize(std::move(text), map_);
  TokenCursor tc(inner, 0, inner.tokens.size(), map_);
  try {
    f.returns = parse_type(tc);
    if (!tc.at_end()) throw ParseError(result_pos, "");
  } catch (const ParseError&) {
    throw ParseError(result_pos, "result_type '" + result_type + "' is not a SQL type");
  }
  return f;
}

}  // namespace clink::sql::detail
