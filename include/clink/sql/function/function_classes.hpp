#pragma once
// Flink's class-style CREATE FUNCTION: `CREATE FUNCTION f AS 'com.example.MyFunction'`
// names a JVM class. clink has no JVM; instead a table maps such class names to C++
// scalar implementations, registered in the function registry under the class name itself
// (so a planned expression refers to the class and resolves on any worker). A name with a
// '.' cannot be written as a call in SQL, so these entries are reachable only through a
// CREATE FUNCTION that names the class; SHOW FUNCTIONS leaves them out.
//
// Nexmark's scripts run unchanged: q14's `CREATE FUNCTION count_char AS
// 'com.github.nexmark.flink.udf.CountChar'` resolves to its C++ port here.
#include <string>
#include <string_view>
#include <vector>

namespace clink::sql {

class FunctionRegistry;

// The class names that have an implementation, sorted (for error messages).
const std::vector<std::string>& function_class_names();
bool is_known_function_class(std::string_view class_name);

// Registers every class implementation under its class name.
void register_class_functions(FunctionRegistry& r);

}  // namespace clink::sql
