// CREATE MODEL, DROP MODEL, SHOW MODELS and SHOW CREATE MODEL against the catalog (Flink
// 2.x's model DDL). A model is a declaration: its provider is checked by name here (a
// built-in one or one registered in this process, model_provider.hpp) and its options
// when a job calling it is built.
#include <set>

#include <fmt/format.h>

#include "clink/sql/binder/binder.hpp"
#include "clink/sql/handler/catalog_ddl.hpp"
#include "clink/sql/spec/model_provider.hpp"

namespace clink::sql {

namespace {

[[noreturn]] void fail(SourcePosition pos, const std::string& message) { throw TranslationError(pos, message); }

std::vector<SqlFunctionParam> model_columns(const std::vector<ast::FunctionParam>& cs, const char* clause) {
  std::vector<SqlFunctionParam> out;
  std::set<std::string> seen;
  for (const auto& c : cs) {
    if (!seen.insert(c.name).second) fail(c.pos, fmt::format("duplicate column `{}` in the model's {}", c.name, clause));
    out.push_back({c.name, to_logical_type(c.type)});
  }
  return out;
}

std::string columns_text(const std::vector<SqlFunctionParam>& cs) {
  std::string out;
  for (const auto& c : cs) out += fmt::format("{}  {} {}", out.empty() ? "" : ",\n", ast::quote_identifier(c.name), c.type.to_string());
  return out;
}

}  // namespace

void CatalogDdl::create_model(const ast::CreateModel& stmt, SourcePosition pos) {
  if (stmt.name.empty() || stmt.name.size() > 3) fail(pos, "invalid model name");
  ModelDef m;
  m.name = stmt.name.back();
  m.temporary = stmt.temporary;
  m.comment = stmt.comment;
  m.input = model_columns(stmt.input, "INPUT");
  m.output = model_columns(stmt.output, "OUTPUT");
  const ast::Property* provider = nullptr;
  for (const auto& p : stmt.options) {
    m.options.emplace_back(p.key, p.value);
    if (p.key == "provider") provider = &p;
  }
  if (!provider)
    fail(stmt.options_pos, fmt::format("Model `{}` needs the option 'provider' (one of: {})", m.name,
                                       model_provider_names()));
  if (!is_known_model_provider(provider->value))
    fail(provider->pos, fmt::format("Unknown model provider '{}' for model `{}` (known providers: {})", provider->value,
                                    m.name, model_provider_names()));
  if (catalog_.model(m.name)) {
    if (stmt.if_not_exists) return;
    fail(pos, fmt::format("Model `{}` already exists", m.name));
  }
  catalog_.add_model(std::move(m));
}

void CatalogDdl::drop_models(const ast::Drop& stmt, SourcePosition pos) {
  for (const auto& qn : stmt.names) {
    const std::string& name = qn.back();
    if (!catalog_.model(name)) {
      if (stmt.if_exists) continue;
      fail(pos, fmt::format("Model `{}` does not exist", name));
    }
    catalog_.remove_model(name);
  }
}

std::string CatalogDdl::show_create_model(const ast::Show& stmt, SourcePosition pos) const {
  const std::string& name = stmt.object.back();
  const ModelDef* m = catalog_.model(name);
  if (!m) fail(pos, fmt::format("Model `{}` does not exist", name));
  std::string out = fmt::format("CREATE {}MODEL `{}`.`{}`.{}\nINPUT (\n{}\n)\nOUTPUT (\n{}\n)\n",
                                m->temporary ? "TEMPORARY " : "", kDefaultCatalog, kDefaultDatabase,
                                ast::quote_identifier(m->name), columns_text(m->input), columns_text(m->output));
  if (!m->comment.empty()) out += "COMMENT " + ast::quote_string(m->comment) + "\n";
  out += "WITH (\n";
  for (std::size_t i = 0; i < m->options.size(); ++i)
    out += fmt::format("  {} = {}{}\n", ast::quote_string(m->options[i].first), ast::quote_string(m->options[i].second),
                       i + 1 < m->options.size() ? "," : "");
  return out + ")\n";
}

}  // namespace clink::sql
