-- Held-out benchmark: tokenise generated source text with string.find patterns, count tokens
local kw = { ["local"] = 1, ["function"] = 1, ["end"] = 1, ["if"] = 1, ["then"] = 1, ["return"] = 1 }
local parts = {}
for i = 1, 300 do
  parts[#parts + 1] = string.format("local function f%d(a, b) if a > %d then return a * b + %d end return b - a end\n", i, i % 17, i)
end
local src = table.concat(parts)
local counts = { kw = 0, name = 0, num = 0, op = 0 }
for rep = 1, 4 do
  local pos, len = 1, #src
  while pos <= len do
    local s, e = src:find("^%s+", pos)
    if s then pos = e + 1 end
    if pos > len then break end
    s, e = src:find("^[%a_][%w_]*", pos)
    if s then
      local w = src:sub(s, e)
      if kw[w] then counts.kw = counts.kw + 1 else counts.name = counts.name + 1 end
      pos = e + 1
    else
      s, e = src:find("^%d+", pos)
      if s then counts.num = counts.num + 1; pos = e + 1
      else counts.op = counts.op + 1; pos = pos + 1 end
    end
  end
end
print("lexer", counts.kw, counts.name, counts.num, counts.op)
