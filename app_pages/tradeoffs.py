import streamlit as st

st.title("tradeoffs")
