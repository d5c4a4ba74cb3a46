-- Wireshark dissector for the SMC dump header (smcdump-ex, smc-tools).
--
-- The records are UDP datagrams on the capture device smc-dummyXXXX whose
-- payload starts with the magic "SMDH"; doc/smc-dump-header.md describes
-- both header versions (v2 current, v1 legacy) and the record bodies.
--
--   wireshark -X lua_script:smc_dump.lua smc.pcap
--   tshark -X lua_script:smc_dump.lua -r smc.pcap -Y smc_dump
--
-- Or copy it into ~/.local/lib/wireshark/plugins/.  Works with the Lua 5.2
-- of Wireshark 3.x/4.0 and the Lua 5.3+ of later releases: no bit operators.

local p = Proto("smc_dump", "SMC dump record")

local rec_types = {
	[1] = "CLC PROPOSAL", [2] = "CLC ACCEPT", [3] = "CLC CONFIRM", [4] = "CLC DECLINE",
	[8] = "LLC", [16] = "CDC", [32] = "DATA", [64] = "LOST",
}
-- SMC_LLC_* message types (the low nibble of the first byte; the kernel's net/smc/smc_llc.c)
local llc_types = {
	[1] = "CONFIRM LINK", [2] = "ADD LINK", [3] = "ADD LINK CONT", [4] = "DELETE LINK",
	[5] = "REQ ADD LINK", [6] = "CONFIRM RKEY", [7] = "TEST LINK", [8] = "CONFIRM RKEY CONT",
	[9] = "DELETE RKEY",
}
local roles = { [0] = "client", [1] = "server" }
local smc_types = { [0] = "SMC-R", [1] = "SMC-D" }
local statuses = { [0] = "offer", [1] = "pending", [2] = "paired", [3] = "declined" }
-- SMC_CLC_DECL_* (the kernel's net/smc/smc_clc.h)
local reasons = {
	[0x00000000] = "none",
	[0x01010000] = "MEM: insufficient memory",
	[0x02010000] = "TIMEOUT_CL", [0x02020000] = "TIMEOUT_AL",
	[0x03000000] = "CNFERR: configuration error",
	[0x03010000] = "PEERNOSMC: peer did not indicate SMC",
	[0x03020000] = "IPSEC: IPsec usage",
	[0x03030000] = "NOSMCDEV: no SMC device found",
	[0x03030001] = "NOSMCDDEV: no SMC-D device found",
	[0x03030002] = "NOSMCRDEV: no SMC-R device found",
	[0x03030003] = "NOISM2SUPP", [0x03030004] = "NOV2EXT", [0x03030005] = "NOV2DEXT",
	[0x03030006] = "NOSEID", [0x03030007] = "NOSMCD2DEV", [0x03030008] = "NOUEID",
	[0x03030009] = "RELEASEERR", [0x0303000a] = "MAXCONNERR", [0x0303000b] = "MAXLINKERR",
	[0x03040000] = "MODEUNSUPP", [0x03050000] = "RMBE_EC", [0x03060000] = "OPTUNSUPP",
	-- the soft backend's own (wire/reg.h SMC_SOFT_DECL_*)
	[0x03060001] = "URING: io_uring may reach it", [0x03060002] = "ZEROCOPY",
	[0x03060003] = "SHARED: another process got it first",
	[0x03060004] = "UNSEEN: went to a program without the library",
	[0x03060005] = "STDIO: stdio may reach it",
	[0x03070000] = "DIFFPREFIX", [0x03080000] = "GETVLANERR", [0x03090000] = "ISMVLANERR",
	[0x030a0000] = "NOACTLINK", [0x030b0000] = "NOSRVLINK", [0x030c0000] = "VERSMISMAT",
	[0x030d0000] = "MAX_DMB", [0x030e0000] = "NOROUTE", [0x030f0000] = "NOINDIRECT",
	[0x04000000] = "SYNCERR", [0x05000000] = "PEERDECL: peer declined",
	[0x09990000] = "INTERR", [0x09990001] = "ERR_RTOK", [0x09990002] = "ERR_RDYLNK",
	[0x09990003] = "ERR_REGBUF",
}

-- IB MTU enum of the QP (SMC-R CLC ACCEPT/CONFIRM)
local mtus = { [1] = "256", [2] = "512", [3] = "1024", [4] = "2048", [5] = "4096" }

local f = {
	magic = ProtoField.string("smc_dump.magic", "Magic"),
	version = ProtoField.uint8("smc_dump.version", "Header version"),
	type = ProtoField.uint8("smc_dump.type", "Record type", base.DEC, rec_types),
	flags = ProtoField.uint8("smc_dump.flags", "Flags", base.HEX),
	f_rx = ProtoField.bool("smc_dump.flags.rx", "Toward the local end", 8, nil, 0x01),
	f_smcd = ProtoField.bool("smc_dump.flags.smcd", "SMC-D", 8, nil, 0x02),
	f_ipv6 = ProtoField.bool("smc_dump.flags.ipv6", "IPv6", 8, nil, 0x04),
	f_trunc = ProtoField.bool("smc_dump.flags.trunc", "Data truncated", 8, nil, 0x08),
	hdr_len = ProtoField.uint8("smc_dump.hdr_len", "Header length (32-bit words)"),
	time = ProtoField.absolute_time("smc_dump.time", "Time", base.UTC),
	token = ProtoField.uint64("smc_dump.token", "Connection token"),
	local_ip = ProtoField.ipv4("smc_dump.local_ip", "Local address"),
	peer_ip = ProtoField.ipv4("smc_dump.peer_ip", "Peer address"),
	local_ip6 = ProtoField.ipv6("smc_dump.local_ip6", "Local address"),
	peer_ip6 = ProtoField.ipv6("smc_dump.peer_ip6", "Peer address"),
	local_port = ProtoField.uint16("smc_dump.local_port", "Local port"),
	peer_port = ProtoField.uint16("smc_dump.peer_port", "Peer port"),
	body_len = ProtoField.uint32("smc_dump.body_len", "Body length"),
	-- CLC-equivalent body
	role = ProtoField.uint8("smc_dump.clc.role", "Role", base.DEC, roles),
	smc_type = ProtoField.uint8("smc_dump.clc.smc_type", "SMC type", base.DEC, smc_types),
	status = ProtoField.uint8("smc_dump.clc.status", "Pairing status", base.DEC, statuses),
	reason = ProtoField.uint32("smc_dump.clc.reason", "Reason", base.HEX, reasons),
	peer_diag = ProtoField.uint32("smc_dump.clc.peer_diagnosis", "Peer diagnosis", base.HEX, reasons),
	lgr_id = ProtoField.uint32("smc_dump.clc.lgr_id", "Link group id", base.HEX),
	gid = ProtoField.uint64("smc_dump.clc.gid", "ISM GID", base.HEX),
	dmb_token = ProtoField.uint64("smc_dump.clc.dmb_token", "DMB token", base.HEX),
	peer_dmb_token = ProtoField.uint64("smc_dump.clc.peer_dmb_token", "Peer DMB token", base.HEX),
	rmbe_size = ProtoField.uint32("smc_dump.clc.rmbe_size", "Receive buffer (bytes)"),
	sndbuf_size = ProtoField.uint32("smc_dump.clc.sndbuf_size", "Send buffer (bytes)"),
	peer_token = ProtoField.uint64("smc_dump.clc.peer_token", "Peer connection token"),
	-- SMC-R CLC body: the sender's RoCE port and RMB, as its CLC message said them
	r_system_id = ProtoField.bytes("smc_dump.clc.r.system_id", "Peer id (system id)"),
	r_gid = ProtoField.ipv6("smc_dump.clc.r.gid", "RoCE GID"),
	r_mac = ProtoField.ether("smc_dump.clc.r.mac", "MAC"),
	r_mtu = ProtoField.uint8("smc_dump.clc.r.qp_mtu", "QP MTU", base.DEC, mtus),
	r_first = ProtoField.uint8("smc_dump.clc.r.first_contact", "First contact", base.DEC, { [0] = "no", [1] = "yes" }),
	r_qpn = ProtoField.uint32("smc_dump.clc.r.qpn", "QP number", base.HEX),
	r_rkey = ProtoField.uint32("smc_dump.clc.r.rmb_rkey", "RMB rkey", base.HEX),
	r_addr = ProtoField.uint64("smc_dump.clc.r.rmb_addr", "RMB address", base.HEX),
	r_psn = ProtoField.uint32("smc_dump.clc.r.psn", "Initial PSN", base.HEX),
	r_version = ProtoField.uint8("smc_dump.clc.r.version", "CLC version"),
	-- CDC body
	prod_wrap = ProtoField.uint16("smc_dump.cdc.prod_wrap", "Producer wrap"),
	prod_count = ProtoField.uint32("smc_dump.cdc.prod_count", "Producer count"),
	cons_wrap = ProtoField.uint16("smc_dump.cdc.cons_wrap", "Consumer wrap"),
	cons_count = ProtoField.uint32("smc_dump.cdc.cons_count", "Consumer count"),
	prod_flags = ProtoField.uint8("smc_dump.cdc.prod_flags", "Producer flags", base.HEX),
	pf_wblk = ProtoField.bool("smc_dump.cdc.write_blocked", "Write blocked", 8, nil, 0x80),
	pf_urgp = ProtoField.bool("smc_dump.cdc.urg_data_pending", "Urgent data pending", 8, nil, 0x40),
	pf_urgr = ProtoField.bool("smc_dump.cdc.urg_data_present", "Urgent data present", 8, nil, 0x20),
	pf_cupd = ProtoField.bool("smc_dump.cdc.cons_curs_upd_req", "Consumer cursor update requested", 8, nil, 0x10),
	pf_fail = ProtoField.bool("smc_dump.cdc.failover_validation", "Failover validation", 8, nil, 0x08),
	conn_flags = ProtoField.uint8("smc_dump.cdc.conn_state_flags", "Connection state flags", base.HEX),
	cf_done = ProtoField.bool("smc_dump.cdc.peer_done_writing", "Peer done writing", 8, nil, 0x80),
	cf_closed = ProtoField.bool("smc_dump.cdc.peer_conn_closed", "Peer connection closed", 8, nil, 0x40),
	cf_abort = ProtoField.bool("smc_dump.cdc.peer_conn_abort", "Peer connection aborted", 8, nil, 0x20),
	-- data body
	offset = ProtoField.uint64("smc_dump.data.offset", "Stream offset"),
	data_len = ProtoField.uint32("smc_dump.data.len", "Bytes moved"),
	cap_len = ProtoField.uint32("smc_dump.data.caplen", "Bytes captured"),
	data = ProtoField.bytes("smc_dump.data.bytes", "Data"),
	-- LLC
	llc_lgr = ProtoField.uint32("smc_dump.llc.lgr_id", "Link group id", base.HEX),
	llc_link = ProtoField.uint8("smc_dump.llc.link_id", "Link number"),
	llc_type = ProtoField.uint8("smc_dump.llc.type", "LLC type", base.DEC, llc_types, 0x0f),
	llc_version = ProtoField.uint8("smc_dump.llc.version", "LLC version", base.DEC, nil, 0xf0),
	llc_flags = ProtoField.uint8("smc_dump.llc.flags", "LLC flags", base.HEX),
	llc_resp = ProtoField.bool("smc_dump.llc.response", "Response", 8, nil, 0x80),
	llc_msg = ProtoField.bytes("smc_dump.llc.message", "LLC message"),
	-- LOST
	pid = ProtoField.uint32("smc_dump.lost.pid", "Process"),
	full = ProtoField.uint64("smc_dump.lost.full", "Dropped, ring full"),
	stalled = ProtoField.uint64("smc_dump.lost.unfinished", "Skipped, never finished"),
	rejected = ProtoField.uint64("smc_dump.lost.rejected", "Refused by the daemon"),
}
local fields = {}
for _, v in pairs(f) do fields[#fields + 1] = v end
p.fields = fields

local function bit(v, n)   -- bit n (0 = least significant) of an integer
	return math.floor(v / 2 ^ n) % 2 == 1
end

local function addr_text(tvb, off, v6, is_v1)
	if v6 and is_v1 then
		return "?"
	end
	if v6 then
		return "[" .. tostring(tvb(off, 16):ipv6()) .. "]"
	end
	return tostring(tvb(off, 4):ipv4())
end

-- Common header: returns the body offset and a text for the Info column.
local function header(tvb, t, version, flags)
	local v6 = bit(flags, 2)
	local is_v1 = version == 1
	local ft = t:add(f.flags, tvb(6, 1))
	ft:add(f.f_rx, tvb(6, 1))
	ft:add(f.f_smcd, tvb(6, 1))
	ft:add(f.f_ipv6, tvb(6, 1))
	ft:add(f.f_trunc, tvb(6, 1))
	t:add(f.hdr_len, tvb(7, 1))
	local lo, po, lp
	if is_v1 then
		local secs, usecs = tvb(8, 4):uint(), tvb(12, 4):uint()
		t:add(f.time, tvb(8, 8), NSTime.new(secs, usecs * 1000))
		t:add(f.token, tvb(16, 4), UInt64.new(tvb(16, 4):uint()))
		lo, po, lp = 20, 24, 28
	else
		local ns = tvb(8, 8):uint64()
		local secs = (ns / 1000000000):tonumber()
		local nsecs = (ns % 1000000000):tonumber()
		t:add(f.time, tvb(8, 8), NSTime.new(secs, nsecs))
		t:add(f.token, tvb(16, 8))
		lo, po, lp = 24, 40, 56
	end
	if v6 and not is_v1 then
		t:add(f.local_ip6, tvb(lo, 16))
		t:add(f.peer_ip6, tvb(po, 16))
	elseif not v6 then
		t:add(f.local_ip, tvb(lo, 4))
		t:add(f.peer_ip, tvb(po, 4))
	end
	t:add(f.local_port, tvb(lp, 2))
	t:add(f.peer_port, tvb(lp + 2, 2))
	local text = string.format("%s:%d %s %s:%d", addr_text(tvb, lo, v6, is_v1), tvb(lp, 2):uint(),
		bit(flags, 0) and "<-" or "->", addr_text(tvb, po, v6, is_v1), tvb(lp + 2, 2):uint())
	local hlen = tvb(7, 1):uint() * 4
	if not is_v1 then
		t:add(f.body_len, tvb(60, 4))
	end
	return hlen, text
end

local function clc(tvb, t)
	if tvb:len() < 56 then
		t:add_expert_info(PI_MALFORMED, PI_ERROR, "CLC body shorter than 56 bytes")
		return ""
	end
	t:add(f.role, tvb(0, 1))
	t:add(f.smc_type, tvb(1, 1))
	t:add(f.status, tvb(2, 1))
	t:add(f.reason, tvb(4, 4))
	t:add(f.peer_diag, tvb(8, 4))
	t:add(f.lgr_id, tvb(12, 4))
	t:add(f.gid, tvb(16, 8))
	t:add(f.dmb_token, tvb(24, 8))
	t:add(f.peer_dmb_token, tvb(32, 8))
	t:add(f.rmbe_size, tvb(40, 4))
	t:add(f.sndbuf_size, tvb(44, 4))
	t:add(f.peer_token, tvb(48, 8))
	local text = ""
	-- SMC-R: 56 bytes more
	if tvb(1, 1):uint() == 0 and tvb:len() >= 112 then
		t:add(f.r_system_id, tvb(56, 8))
		t:add(f.r_gid, tvb(64, 16))
		t:add(f.r_mac, tvb(80, 6))
		t:add(f.r_mtu, tvb(86, 1))
		t:add(f.r_first, tvb(87, 1))
		t:add(f.r_qpn, tvb(88, 4))
		t:add(f.r_rkey, tvb(92, 4))
		t:add(f.r_addr, tvb(96, 8))
		t:add(f.r_psn, tvb(104, 4))
		t:add(f.r_version, tvb(108, 1))
		if tvb(88, 4):uint() ~= 0 then
			text = string.format(" qp 0x%06x rkey 0x%08x", tvb(88, 4):uint(), tvb(92, 4):uint())
		end
	end
	local reason = tvb(4, 4):uint()
	if reason ~= 0 then
		return text .. string.format(" reason 0x%08x", reason)
	end
	return text
end

local function cdc(tvb, t)
	if tvb:len() < 16 then
		t:add_expert_info(PI_MALFORMED, PI_ERROR, "CDC body shorter than 16 bytes")
		return ""
	end
	t:add(f.prod_wrap, tvb(0, 2))
	t:add(f.prod_count, tvb(2, 4))
	t:add(f.cons_wrap, tvb(6, 2))
	t:add(f.cons_count, tvb(8, 4))
	local pf = t:add(f.prod_flags, tvb(12, 1))
	for _, b in ipairs({ f.pf_wblk, f.pf_urgp, f.pf_urgr, f.pf_cupd, f.pf_fail }) do
		pf:add(b, tvb(12, 1))
	end
	local cf = t:add(f.conn_flags, tvb(13, 1))
	for _, b in ipairs({ f.cf_done, f.cf_closed, f.cf_abort }) do
		cf:add(b, tvb(13, 1))
	end
	return string.format(" prod %d:%d cons %d:%d", tvb(0, 2):uint(), tvb(2, 4):uint(),
		tvb(6, 2):uint(), tvb(8, 4):uint())
end

local function data(tvb, t)
	if tvb:len() < 16 then
		t:add_expert_info(PI_MALFORMED, PI_ERROR, "data body shorter than 16 bytes")
		return ""
	end
	t:add(f.offset, tvb(0, 8))
	t:add(f.data_len, tvb(8, 4))
	t:add(f.cap_len, tvb(12, 4))
	local n = math.min(tvb(12, 4):uint(), tvb:len() - 16)
	if n > 0 then
		t:add(f.data, tvb(16, n))
	end
	return string.format(" offset %s len %d", tostring(tvb(0, 8):uint64()), tvb(8, 4):uint())
end

local function llc(tvb, t)
	if tvb:len() < 12 then
		t:add_expert_info(PI_MALFORMED, PI_ERROR, "LLC body shorter than 12 bytes")
		return ""
	end
	t:add(f.llc_lgr, tvb(0, 4))
	t:add(f.llc_link, tvb(4, 1))
	t:add(f.llc_type, tvb(8, 1))
	t:add(f.llc_version, tvb(8, 1))
	t:add(f.llc_flags, tvb(11, 1)):add(f.llc_resp, tvb(11, 1))
	t:add(f.llc_msg, tvb(8))
	local ltype = tvb(8, 1):uint() % 16
	return string.format(" link %d %s%s", tvb(4, 1):uint(),
		llc_types[ltype] or string.format("type %d", ltype),
		bit(tvb(11, 1):uint(), 7) and " response" or "")
end

local function lost(tvb, t)
	if tvb:len() < 32 then
		t:add_expert_info(PI_MALFORMED, PI_ERROR, "LOST body shorter than 32 bytes")
		return ""
	end
	t:add(f.pid, tvb(0, 4))
	t:add(f.full, tvb(8, 8))
	t:add(f.stalled, tvb(16, 8))
	t:add(f.rejected, tvb(24, 8))
	return string.format(" pid %d: %s ring full, %s unfinished, %s refused", tvb(0, 4):uint(),
		tostring(tvb(8, 8):uint64()), tostring(tvb(16, 8):uint64()),
		tostring(tvb(24, 8):uint64()))
end

local bodies = {
	[1] = clc, [2] = clc, [3] = clc, [4] = clc, [8] = llc, [16] = cdc, [32] = data,
	[64] = lost,
}

local function is_record(tvb)
	if tvb:len() < 32 or tvb(0, 4):string() ~= "SMDH" then
		return false
	end
	local version, hwords = tvb(4, 1):uint(), tvb(7, 1):uint()
	return (version == 1 and hwords == 8) or (version == 2 and hwords == 16 and tvb:len() >= 64)
end

function p.dissector(tvb, pinfo, tree)
	if not is_record(tvb) then
		return 0
	end
	local version, rtype, flags = tvb(4, 1):uint(), tvb(5, 1):uint(), tvb(6, 1):uint()
	pinfo.cols.protocol = "SMC-DUMP"
	local t = tree:add(p, tvb(), "SMC dump record")
	t:add(f.magic, tvb(0, 4))
	t:add(f.version, tvb(4, 1))
	t:add(f.type, tvb(5, 1))
	local hlen, text = header(tvb, t, version, flags)
	local name = rec_types[rtype] or string.format("type %d", rtype)
	local extra = ""
	local body = bodies[rtype]
	if body and tvb:len() > hlen then
		extra = body(tvb(hlen):tvb(), t)
	end
	pinfo.cols.info = string.format("%s %s%s", name, text, extra)
	return tvb:len()
end

p:register_heuristic("udp", function(tvb, pinfo, tree)
	if not is_record(tvb) then
		return false
	end
	p.dissector(tvb, pinfo, tree)
	return true
end)
