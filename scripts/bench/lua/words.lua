-- Held-out benchmark: string processing: generated text split into words,
-- counted, sorted by frequency, pattern substitutions, formatting and a
-- small CSV parse.
local syll = { "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu" }
local seed = 7
local function rnd(n) seed = (seed * 16807) % 2147483647; return seed % n + 1 end
local parts = {}
for i = 1, 3000 do
  local w = {}
  for _ = 1, rnd(3) do w[#w + 1] = syll[rnd(#syll)] end
  parts[#parts + 1] = table.concat(w)
  if i % 12 == 0 then parts[#parts + 1] = "\n" end
end
local text = table.concat(parts, " ")
local freq, nw = {}, 0
for word in text:gmatch("%a+") do freq[word] = (freq[word] or 0) + 1; nw = nw + 1 end
local list = {}
for k, v in pairs(freq) do list[#list + 1] = { k, v } end
table.sort(list, function(a, b) if a[2] ~= b[2] then return a[2] > b[2] end return a[1] < b[1] end)
print("words", nw, "distinct", #list)
for i = 1, 5 do print(list[i][1], list[i][2]) end
local up = text:gsub("(%a)(%a*)", function(a, b) return a:upper() .. b end)
print(#up, up:sub(1, 40))
local rev = {}
for line in text:gmatch("[^\n]+") do rev[#rev + 1] = line:reverse():sub(1, 8) end
print(#rev, rev[1], rev[#rev])
local csv = {}
for i = 1, 400 do csv[#csv + 1] = string.format("%d,%s,%.2f", i, syll[i % 10 + 1], i / 7) end
local sum = 0
for _, l in ipairs(csv) do
  local a, b, c = l:match("^(%d+),(%a+),([%d%.]+)$")
  sum = sum + tonumber(a) + #b + tonumber(c)
end
print(string.format("csv %.2f", sum))
