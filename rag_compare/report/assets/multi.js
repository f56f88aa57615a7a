// The status matrix of several candidates: a row per case that changed in some candidate, a column per
// candidate. Built from the page's JSON data block; every value goes in as text, never as markup.
// Filters: a status in a chosen candidate (or in any), and a search of the case ids; the address keeps
// them (#status=regressed&candidate=c1&q=hotel), so a filtered view can be shared.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rag-compare-data").textContent);
  var app = document.getElementById("matrix-app");
  var ANY = "";

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function select(id, label, options) {
    var wrapper = element("label", { "for": id }, label + " ");
    var control = element("select", { id: id });
    options.forEach(function (option) { control.appendChild(element("option", { value: option[0] }, option[1])); });
    wrapper.appendChild(control);
    return wrapper;
  }

  function state() {
    var found = {};
    window.location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var pair = part.split("=");
      if (pair.length === 2) { found[decodeURIComponent(pair[0])] = decodeURIComponent(pair[1]); }
    });
    return { status: found.status || ANY, candidate: found.candidate || ANY, q: found.q || "" };
  }

  function keep(current) {
    var parts = [];
    ["status", "candidate", "q"].forEach(function (key) {
      if (current[key]) { parts.push(encodeURIComponent(key) + "=" + encodeURIComponent(current[key])); }
    });
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : window.location.pathname);
  }

  function matches(row, current) {
    if (current.q && row[0].toLowerCase().indexOf(current.q.toLowerCase()) < 0) { return false; }
    if (!current.status) { return true; }
    var wanted = data.statuses.indexOf(current.status);
    if (current.candidate) { return row[1][data.names.indexOf(current.candidate)] === wanted; }
    return row[1].indexOf(wanted) >= 0;
  }

  var controls = element("div", { "class": "filters" });
  controls.appendChild(select("status", "status", [[ANY, "any status"]].concat(
    data.statuses.map(function (status) { return [status, status]; }))));
  controls.appendChild(select("candidate", "in", [[ANY, "any candidate"]].concat(
    data.names.map(function (name) { return [name, name]; }))));
  var search = element("input", { id: "search", type: "search", placeholder: "case id contains" });
  controls.appendChild(search);
  var shown = element("p", { id: "shown", "class": "muted" });
  var table = element("table", { id: "matrix", "class": "matrix" });
  var head = element("thead");
  var header = element("tr");
  header.appendChild(element("th", {}, "case"));
  data.names.forEach(function (name) { header.appendChild(element("th", {}, name)); });
  head.appendChild(header);
  table.appendChild(head);
  var body = element("tbody");
  table.appendChild(body);
  var scroll = element("div", { "class": "scroll" });
  scroll.appendChild(table);
  app.textContent = "";
  app.appendChild(controls);
  app.appendChild(shown);
  app.appendChild(scroll);

  function render() {
    var current = { status: document.getElementById("status").value,
      candidate: document.getElementById("candidate").value, q: search.value.trim() };
    keep(current);
    body.textContent = "";
    var count = 0;
    data.rows.forEach(function (row) {
      if (!matches(row, current)) { return; }
      count += 1;
      var line = element("tr");
      line.appendChild(element("td", {}, row[0]));
      row[1].forEach(function (index) {
        var status = index < 0 ? "" : data.statuses[index];
        var cell = element("td", {});
        if (status) { cell.appendChild(element("span", { "class": "badge " + data.tones[index] }, status)); }
        line.appendChild(cell);
      });
      body.appendChild(line);
    });
    var more = data.total > data.rows.length ? " (" + data.rows.length + " of the " + data.total +
      " changed cases are in this page)" : "";
    shown.textContent = count + " of " + data.rows.length + " cases shown" + more;
  }

  var initial = state();
  document.getElementById("status").value = data.statuses.indexOf(initial.status) >= 0 ? initial.status : ANY;
  document.getElementById("candidate").value = data.names.indexOf(initial.candidate) >= 0 ? initial.candidate : ANY;
  search.value = initial.q;
  ["status", "candidate"].forEach(function (id) { document.getElementById(id).addEventListener("change", render); });
  search.addEventListener("input", render);
  render();
}());
