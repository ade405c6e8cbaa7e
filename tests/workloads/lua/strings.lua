-- String building, patterns and formatting: table.concat, gsub with strings,
-- tables and functions as replacements, gmatch, find, rep, byte/char.

local words = {}
local syll = { "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qua" }
local seed = 12345
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n + 1
end
for i = 1, 4000 do
  local w = {}
  for _ = 1, rnd(4) do w[#w + 1] = syll[rnd(#syll)] end
  words[i] = table.concat(w)
end
local text = table.concat(words, " ")
print("text length", #text)

-- word frequencies, printed in sorted order
local freq = {}
for w in text:gmatch("%a+") do freq[w] = (freq[w] or 0) + 1 end
local keys = {}
for k in pairs(freq) do keys[#keys + 1] = k end
table.sort(keys, function(a, b)
  if freq[a] ~= freq[b] then return freq[a] > freq[b] end
  return a < b
end)
print("distinct words", #keys)
for i = 1, 8 do print(string.format("%-12s %5d", keys[i], freq[keys[i]])) end

-- gsub with a pattern, a table and a function
local vowels = { a = "A", e = "E", i = "I", o = "O", u = "U" }
local up, n1 = text:gsub("[aeiou]", vowels)
local swapped, n2 = text:gsub("(%a)(%a)", "%2%1")
local lens, n3 = text:gsub("%a+", function(w) return #w end)
print("vowel replacements", n1, #up, up:sub(1, 40))
print("swaps", n2, swapped:sub(1, 40))
print("lengths", n3, lens:sub(1, 40))

-- building a long string piece by piece, then checksumming it
local parts = {}
for i = 1, 20000 do
  parts[#parts + 1] = string.format("%d:%x;", i, i * 7919)
end
local s = table.concat(parts)
local sum = 0
for i = 1, #s, 3 do sum = (sum * 31 + s:byte(i)) % 1000000007 end
print("built", #s, "checksum", sum)

-- find / match / rep / reverse
local csv = ("alpha,beta,gamma,delta,"):rep(500)
local count, pos = 0, 1
while true do
  local a, b = csv:find(",", pos, true)
  if not a then break end
  count = count + 1
  pos = b + 1
end
print("commas", count)
print("match", ("key = value42"):match("^(%w+)%s*=%s*(%a+)(%d+)$"))
print("reverse", ("stressed"):reverse(), ("x"):rep(5, "-"))
print("upper/lower", ("MiXeD CaSe"):upper(), ("MiXeD CaSe"):lower())
local chars = {}
for i = 65, 90 do chars[#chars + 1] = string.char(i) end
print(table.concat(chars))
print(string.format("%5.2f|%-6s|%06d|%q", math.pi, "ab", 42, "a\nb\"c"))
