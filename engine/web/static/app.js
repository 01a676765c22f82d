// The table page: live state over a WebSocket, refereeing by tapping (docs/web.md).
//
// The page knows no rule. It shows what the server's referee says (its state, its one-line
// reasons, its questions) and composes the same command lines `unoattack table` accepts from
// its pickers: a card, a word, a name, a number. What a line means is the referee's business.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs = {}, ...kids) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) node.append(kid);
    return node;
  };

  const page = {
    ws: null,
    epoch: "",
    seq: 0, // the last update applied
    role: "watcher",
    table: null, // what does not change: deck cards, colours, players, box or not
    view: null, // the newest state: the referee's view, as `unoattack table --json` prints it
    box: null, // the newest box panel
    nextId: 1,
    waiting: new Map(), // request id -> resolve
    retry: 500,
    timer: null, // the reconnect waiting to happen
    hand: [], // round end: cards picked for the hand being entered
    received: [], // every update number received, in order (tests read it)
    hellos: 0, // connections made
    gaps: 0,
  };
  window.unoattack = page; // for the browser tests and the curious

  const COLOUR_NAMES = { R: "red", Y: "yellow", G: "green", B: "blue" };
  const colourName = (c) => {
    if (!c) return "-";
    const known = page.table && page.table.colors.find((x) => x.code === c);
    return known ? known.name : COLOUR_NAMES[c] || c;
  };
  const name = (seat) => (page.view ? page.view.players[seat] : `seat ${seat}`);

  // -- the connection ------------------------------------------------------------------------
  function connect() {
    clearTimeout(page.timer);
    page.timer = null;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const query = page.epoch ? `?since=${page.seq}&epoch=${page.epoch}` : "";
    const ws = new WebSocket(`${proto}//${location.host}/ws${query}`);
    page.ws = ws;
    ws.onopen = () => { page.retry = 500; setConn(true); };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      receive(msg);
    };
    ws.onclose = () => {
      setConn(false);
      if (page.ws !== ws) return;
      page.ws = null;
      for (const resolve of page.waiting.values()) resolve({ ok: false, error: "connection lost: try again" });
      page.waiting.clear();
      page.timer = setTimeout(connect, page.retry);
      page.retry = Math.min(page.retry * 2, 5000);
    };
  }
  page.reconnect = () => { if (page.ws) page.ws.close(); };

  // A phone that slept shows the current state at once: reconnect as soon as it is visible.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && (!page.ws || page.ws.readyState > 1)) {
      page.retry = 500;
      if (!page.ws) connect();
    }
  });

  function setConn(on) {
    const c = $("conn");
    c.textContent = on ? "live" : "offline";
    c.className = "conn " + (on ? "on" : "off");
  }

  function receive(msg) {
    if (msg.type === "hello") {
      page.hellos += 1;
      if (msg.epoch !== page.epoch) { page.seq = 0; page.received = []; $("messages").replaceChildren(); }
      const fresh = page.seq === 0;
      page.epoch = msg.epoch;
      page.role = msg.role;
      page.table = msg.table;
      if (fresh) for (const item of msg.recent) addMessage(item.line);
      buildPicker();
      render();
    } else if (msg.type === "update") {
      if (msg.seq <= page.seq) return;
      if (page.seq && msg.seq !== page.seq + 1) page.gaps += 1;
      page.seq = msg.seq;
      page.received.push(msg.seq);
      page.view = msg.view;
      page.box = msg.box;
      for (const line of msg.messages) addMessage(line);
      render();
    } else if (msg.type === "reset") {
      addMessage(`(missed updates ${msg.since + 1} to ${msg.oldest - 1} while away)`, "gap");
    } else if (msg.type === "reply" || msg.type === "error") {
      const resolve = page.waiting.get(msg.id);
      page.waiting.delete(msg.id);
      if (resolve) resolve(msg.type === "error" ? { ok: false, error: msg.error } : msg);
      else if (msg.type === "error") showReply(msg.error, false);
    }
  }

  function request(type, fields) {
    return new Promise((resolve) => {
      if (!page.ws || page.ws.readyState !== 1) { resolve({ ok: false, error: "not connected: wait a moment" }); return; }
      const id = page.nextId++;
      page.waiting.set(id, resolve);
      page.ws.send(JSON.stringify({ type, id, ...fields }));
    });
  }

  // -- acting ---------------------------------------------------------------------------------
  async function act(line) {
    const reply = await request("act", { line });
    if (reply.ask) { openAsk(reply); return reply; }
    showReply(reply.ok ? (reply.messages || []).join(" · ") : reply.error, reply.ok);
    return reply;
  }
  page.act = act;

  async function boxControl(op, params) {
    const reply = await request("box", params ? { op, params } : { op });
    showReply(reply.ok ? (reply.messages || []).join(" · ") || `box: ${op} done` : reply.error, reply.ok);
  }

  function showReply(text, ok) {
    const r = $("reply");
    r.textContent = text || "";
    r.className = ok ? "ok" : "error";
  }

  // The referee asked for more (a wild's colour, a target, a count): its question, and the
  // answers it accepts (the referee tried each on a copy of itself).
  function openAsk(reply) {
    const dialog = $("ask");
    $("ask-question").textContent = reply.ask;
    const box = $("ask-choices");
    box.replaceChildren();
    const titles = { colour: "colour", player: "player", number: "how many", answer: "answer" };
    for (const [group, words] of Object.entries(reply.choices || {})) {
      box.append(el("h3", { text: titles[group] || group }));
      const row = el("div", { class: "group" });
      for (const word of words) {
        const cls = group === "colour" ? `card ${word}` : "";
        const label = group === "colour" ? colourName(word) : word;
        row.append(el("button", {
          type: "button", class: cls, "data-word": word, text: label,
          onclick: () => { dialog.close(); act(`${reply.line} ${word}`); },
        }));
      }
      box.append(row);
    }
    if (!dialog.open) dialog.showModal();
  }
  $("ask-cancel").addEventListener("click", () => $("ask").close());

  // -- joining ---------------------------------------------------------------------------------
  $("join-open").addEventListener("click", async () => {
    if (page.role === "player") {
      await fetch("/api/leave", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      page.reconnect();
      return;
    }
    $("join-error").textContent = "";
    $("join").showModal();
    $("code").focus();
  });
  $("join-cancel").addEventListener("click", () => $("join").close());
  $("join-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const res = await fetch("/api/join", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: $("code").value.trim() }),
    });
    let body = {};
    try { body = await res.json(); } catch { /* keep {} */ }
    if (!res.ok) { $("join-error").textContent = body.error || `refused (${res.status})`; return; }
    $("join").close();
    $("code").value = "";
    page.reconnect(); // the WebSocket reads the new session cookie when it opens
  });

  // -- the card picker (the active deck's cards, as the server lists them) --------------------
  function buildPicker() {
    const picker = $("picker");
    picker.replaceChildren();
    if (!page.table) return;
    const groups = new Map();
    for (const c of page.table.cards) {
      const key = c.color || "wild";
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(c);
    }
    for (const [key, cards] of groups) {
      const row = el("div", { class: "group", "aria-label": key === "wild" ? "wilds" : colourName(key) });
      for (const c of cards) {
        row.append(el("button", {
          type: "button",
          class: `card ${c.color || "wild"}`,
          "data-card": c.card,
          title: `${c.card}: ${c.points} points, ${c.copies} in the deck`,
          text: c.color ? c.face : c.card,
          onclick: () => pickCard(c.card),
        }));
      }
      picker.append(row);
    }
  }

  function pickCard(card) {
    const v = page.view;
    if (!v) return;
    if (v.phase === "score") {
      page.hand.push(card);
      renderHandEntry();
      return;
    }
    const uno = $("with-uno").checked ? " uno" : "";
    $("with-uno").checked = false;
    act(card + uno);
  }

  function renderHandEntry() {
    const chips = $("hand-chips");
    chips.replaceChildren(...page.hand.map((card, i) => {
      const info = page.table.cards.find((c) => c.card === card);
      return el("button", {
        type: "button", class: `card ${(info && info.color) || "wild"}`, text: card, title: "remove",
        onclick: () => { page.hand.splice(i, 1); renderHandEntry(); },
      });
    }));
  }
  const enterHand = async (suffix) => {
    const line = (page.hand.length ? page.hand.join(" ") : "-") + suffix;
    const reply = await act(line);
    if (reply.ok) { page.hand = []; renderHandEntry(); }
  };
  $("hand-enter").addEventListener("click", () => enterHand(""));
  $("hand-force").addEventListener("click", () => enterHand(" !"));
  $("hand-none").addEventListener("click", () => { page.hand = []; enterHand(""); });
  $("hand-clear").addEventListener("click", () => { page.hand = []; renderHandEntry(); });

  const selected = (id) => $(id).value;
  $("catch").addEventListener("click", () => {
    const by = selected("by");
    act(`catch ${selected("who")}${by ? " " + by : ""}`);
  });
  $("uno-for").addEventListener("click", () => act(`uno ${selected("who")}`));
  $("dealer").addEventListener("click", () => act(`dealer ${selected("who")}`));
  $("set-hand").addEventListener("click", () => act(`hand ${selected("who")} ${$("count").value}`));
  $("load").addEventListener("click", () => act(`load ${$("load-n").value}`));
  for (const b of document.querySelectorAll("[data-line]")) b.addEventListener("click", () => act(b.dataset.line));
  for (const b of document.querySelectorAll("[data-box]")) b.addEventListener("click", () => boxControl(b.dataset.box));
  $("model-set").addEventListener("click", () => {
    const params = {};
    for (const input of $("model-fields").querySelectorAll("input")) {
      if (input.value === "" || input.value === input.dataset.was) continue;
      const num = Number(input.value);
      params[input.name] = Number.isFinite(num) && input.dataset.kind === "number" ? num : input.value;
    }
    if (!Object.keys(params).length) { showReply("change a value first", false); return; }
    boxControl("model.set", params);
  });

  // -- rendering --------------------------------------------------------------------------------
  function addMessage(line, cls) {
    const list = $("messages");
    list.prepend(el("li", { class: cls, text: line }));
    while (list.children.length > 120) list.lastChild.remove();
  }

  function cardFace(card) {
    if (!card) return { cls: "empty", text: "?" };
    const info = page.table && page.table.cards.find((c) => c.card === card);
    return { cls: info && info.color ? info.color : "wild", text: card };
  }

  function render() {
    const v = page.view;
    if (!v || !page.table) return;
    document.body.dataset.phase = v.phase;
    document.body.dataset.role = page.role;
    $("round").textContent = `round ${v.round} · ${v.phase} · ${v.mode} to ${v.target}`;
    $("join-open").textContent = page.role === "player" ? "Leave" : "Join";
    $("join-open").hidden = Boolean(page.table.watch_only);
    $("watch-only").hidden = !page.table.watch_only;
    $("watch-only").textContent = page.table.watch_only || "";

    const top = cardFace(v.top);
    const t = $("top");
    t.className = `card big ${top.cls}`;
    t.textContent = top.text;
    t.dataset.card = v.top || "";
    const playing = v.phase === "play";
    $("colour").replaceChildren(
      ...(v.color ? [el("span", { class: `swatch card ${v.color}` })] : []),
      `colour ${colourName(v.color)}`,
    );
    $("colour").dataset.color = v.color || "";
    $("turn").textContent = playing ? `${name(v.turn)} to play` : v.phase === "deal" ? `${name(v.dealer)} deals` : "";
    $("turn").dataset.seat = playing ? v.turn : "";
    $("direction").textContent = v.direction === 1 ? "↻ play goes left (clockwise)" : "↺ play goes right (counter-clockwise)";
    $("direction").dataset.direction = v.direction;
    $("prompt").textContent = v.prompt;

    $("owes").replaceChildren(...v.owes.map((line) => el("li", { text: line })));
    if (v.pending.length > 1) {
      $("owes").append(el("li", { class: "order", text: "order: " + v.pending.map((o) => name(o.seat)).join(" → ") }));
    }

    const b = v.button;
    const bs = $("button-state");
    if (v.classic && b.box) bs.replaceChildren("button locked: the referee dispenses every draw");
    else if (!b.box && page.table.box) bs.replaceChildren(v.hitter !== null ? `${name(v.hitter)} presses the box` : "nobody presses now");
    else if (!b.box) bs.replaceChildren(v.hitter !== null ? `no box: tap what fired for ${name(v.hitter)}` : "no box connected");
    else if (b.locked === false && b.seat !== null) bs.replaceChildren(el("span", { class: "live", text: `● button live for ${name(b.seat)}` }));
    else bs.replaceChildren(b.locked ? el("span", { class: "locked", text: "■ button locked" }) : "button: waiting for the box");
    bs.dataset.locked = String(b.locked);

    const uno = v.uno;
    const u = $("uno");
    u.hidden = !uno;
    if (uno) u.textContent = uno.called ? `${name(uno.seat)} has one card and called UNO` : `${name(uno.seat)} has one card and has not called UNO: catch them before the next player starts!`;

    renderSeats(v);
    renderScores(v);
    renderBox(v, page.box);
    renderActions(v);
  }

  function renderSeats(v) {
    const owing = new Set(v.pending.map((o) => o.seat));
    $("seats").replaceChildren(...v.players.map((player, s) => {
      const turn = v.phase === "play" && s === v.turn;
      const tags = [];
      if (s === v.dealer) tags.push(el("span", { class: "badge", text: "dealer" }));
      if (owing.has(s)) tags.push(el("span", { class: "badge owes", text: "owes" }));
      if (v.uno && v.uno.seat === s) tags.push(el("span", { class: "badge uno", text: v.uno.called ? "UNO" : "UNO?" }));
      if (!v.active[s]) tags.push(el("span", { class: "badge", text: "out" }));
      return el("tr", { class: [turn ? "turn" : "", v.active[s] ? "" : "out"].join(" ").trim() || null, "data-seat": s },
        el("td", { text: turn ? "▶" : "" }),
        el("td", { class: "name" }, player, ...tags),
        el("td", { class: "num hand", text: String(v.hands[s]) }),
        el("td", { class: "num fired", text: `${v.fired[s]} (${v.presses[s]})` }),
        el("td", { class: "num score", text: String(v.scores[s]) }));
    }));
  }

  function renderScores(v) {
    const order = v.players.map((_, s) => s).sort((a, b) => v.scores[b] - v.scores[a] || a - b);
    $("scores").replaceChildren(...order.map((s) => el("tr", {},
      el("td", { text: v.players[s] + (v.game_winners.includes(s) ? " ★ wins" : "") }),
      el("td", { class: "num", text: String(v.scores[s]) }))));
    const head = el("tr", {}, el("th", { text: "round" }), el("th", { text: "to" }),
      ...v.players.map((p) => el("th", { text: p })));
    $("rounds").replaceChildren(...(v.rounds.length ? [head] : []), ...v.rounds.map((r) => el("tr", {},
      el("td", { text: String(r.round) }), el("td", { text: name(r.winner) }),
      ...r.gained.map((g) => el("td", { class: "num", text: g ? `+${g}` : "" })))));
  }

  function renderBox(v, box) {
    const facts = [];
    if (!box.connected) facts.push(["box", box.lost ? `lost: ${box.lost}` : "none (--port none)"]);
    else {
      facts.push(["state", box.state || "?"], ["hopper", box.hopper ?? "?"], ["dry streak", box.dry_streak ?? "?"],
        ["jams", box.jams], ["button", box.locked ? "locked" : "live"]);
      if (box.fault) facts.push(["fault", box.fault]);
      if (v.dispensing) facts.push(["dispensing", `${v.dispensing.cards} for ${name(v.dispensing.seat)}`]);
    }
    $("box-facts").replaceChildren(...facts.flatMap(([k, val]) => [el("dt", { text: k }), el("dd", { "data-fact": k, text: String(val) })]));
    $("bursts").replaceChildren(...box.bursts.map((b) => el("li", {
      text: `press ${b.press_id}${b.seat ? " · " + b.seat : ""}: ${b.ejected ? b.ejected + " card" + (b.ejected === 1 ? "" : "s") : "dry"}${b.reason === "fired" || b.reason === "dry" ? "" : " [" + b.reason + "]"}`,
    })));
    const controls = $("box-controls");
    controls.hidden = !(page.role === "player" && box.connected);
    const fields = $("model-fields");
    if (box.model && fields.dataset.filled !== JSON.stringify(box.model)) {
      fields.dataset.filled = JSON.stringify(box.model);
      fields.replaceChildren(...Object.entries(box.model)
        .filter(([, val]) => typeof val === "number" || typeof val === "string")
        .map(([k, val]) => el("label", {}, k, el("input", {
          name: k, value: String(val), "data-was": String(val), "data-kind": typeof val,
          inputmode: typeof val === "number" ? "decimal" : "text",
        }))));
    }
  }

  function button(label, line, opts = {}) {
    return el("button", { type: "button", "data-line": line, class: opts.primary ? "primary" : null, text: label, onclick: () => act(line) });
  }

  function renderActions(v) {
    const mine = page.role === "player";
    $("actions").hidden = !mine || v.phase === "over" && !v.undo;
    if (!mine) return;
    const row = $("act-buttons");
    const buttons = [];
    const phase = v.phase;
    const hitter = v.hitter;
    if (phase === "deal") buttons.push(el("span", { text: "Tap the card turned up:" }));
    if (phase === "play") {
      if (hitter !== null && !v.classic) {
        if (v.button.box) buttons.push(button(`Press for ${name(hitter)}`, "press", { primary: true }));
        else for (let n = 0; n <= 6; n++) buttons.push(button(n === 0 ? "dry" : `fired ${n}`, `fired ${n}`, { primary: n === 0 }));
      } else if (hitter !== null && !v.button.box) {
        for (let n = 0; n <= 6; n++) buttons.push(button(`${n} dealt`, `fired ${n}`));
      }
      if (!v.classic) buttons.push(button("Hit", "hit"));
      if (v.classic) buttons.push(button("Draw", "draw"));
      buttons.push(button("Pass", "pass"), button("UNO", "uno"));
      if (v.wd4) buttons.push(button("Challenge: WD4 legal", "challenge y"), button("Challenge: not legal", "challenge n"));
    }
    if (v.undo) buttons.push(button("Undo", "undo"));
    row.replaceChildren(...buttons);

    const scoring = phase === "score";
    $("hand-entry").hidden = !scoring;
    if (scoring && v.to_enter.length) {
      const seat = v.to_enter[0];
      $("hand-entry-title").textContent = `Cards left in ${name(seat)}'s hand (${v.hands[seat]}): tap them`;
    }
    $("uno-toggle").hidden = phase !== "play";
    $("picker").hidden = !(phase === "deal" || phase === "play" || phase === "score");
    const who = $("who");
    if (who.options.length !== v.players.length) {
      who.replaceChildren(...v.players.map((p) => el("option", { value: p, text: p })));
      $("by").replaceChildren(el("option", { value: "", text: "(nobody)" }), ...v.players.map((p) => el("option", { value: p, text: p })));
    }
  }

  connect();
})();
