-- Held-out benchmark: serialise nested tables to a JSON-like text and parse it back
local function ser(v, out)
  local t = type(v)
  if t == "table" then
    if #v > 0 then
      out[#out + 1] = "["
      for i = 1, #v do if i > 1 then out[#out + 1] = "," end ser(v[i], out) end
      out[#out + 1] = "]"
    else
      out[#out + 1] = "{"
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys)
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = string.format("%q:", k)
        ser(v[k], out)
      end
      out[#out + 1] = "}"
    end
  elseif t == "string" then out[#out + 1] = string.format("%q", v)
  else out[#out + 1] = tostring(v) end
end
local function parse(s)
  local pos = 1
  local function ws() pos = s:find("[^ ]", pos) or pos end
  local val
  function val()
    ws()
    local c = s:sub(pos, pos)
    if c == "[" then
      pos = pos + 1; local a = {}
      ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1 return a end
      while true do
        a[#a + 1] = val(); ws()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == "]" then return a end
      end
    elseif c == "{" then
      pos = pos + 1; local o = {}
      while true do
        ws()
        local k = s:match('^"(.-)"', pos); pos = pos + #k + 3
        o[k] = val(); ws()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == "}" then return o end
      end
    elseif c == '"' then
      local str = s:match('^"(.-)"', pos); pos = pos + #str + 2; return str
    else
      local num = s:match("^-?[%d%.]+", pos); pos = pos + #num; return tonumber(num)
    end
  end
  return val()
end
local total = 0
for round = 1, 12 do
  local doc = {}
  for i = 1, 40 do
    doc[i] = { id = i * round, name = "item" .. i, tags = { "a" .. (i % 7), "b" .. (i % 3) },
               score = (i * 37 % 101) / 7, nested = { x = i, y = { i, i + 1, i + 2 } } }
  end
  local out = {}
  ser(doc, out)
  local text = table.concat(out)
  local back = parse(text)
  total = total + #text + back[40].nested.y[3] + #back
end
print("json", total)
